#!/usr/bin/python3
"""Checks tests/unit/parser/dialect_cases.txt against a real MariaDB: every
case's SQL, sent as raw bytes in its charset and sql_mode, must give the
expected row (or an error for ERR). The same file drives the lexer's unit
test (tests/unit/parser/dialect_test.cpp), so the two agree through it.

  dialect_server.py [port]      (default $SP_DB0_PORT or 3307; root over the socket of scripts/cluster)
"""
import os
import re
import sys

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, '..', 'unit', 'parser', 'dialect_cases.txt')
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))


def unescape(text):
    return re.sub(rb'%([0-9A-Fa-f]{2}|%)', lambda m: b'%' if m.group(1) == b'%' else bytes([int(m.group(1), 16)]),
                  text.encode('latin1'))


def show(value):
    if value is None:
        return 'NULL'
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
    else:
        raw = str(value).encode('latin1')
    return ''.join(chr(b) if 0x20 <= b < 0x7f and b != 0x25 else '%%%02X' % b for b in raw).replace('%25', '%%')


def cases():
    with open(CASES, encoding='latin1') as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                continue
            charset, mode, expected, sql = [p.strip() for p in line.split('|', 3)]
            yield number, charset, mode, expected, sql


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get('SP_DB0_PORT', '3307'))
    cluster_dir = os.environ.get('SP_CLUSTER_DIR', os.path.join(REPO, '.cluster'))
    failures = 0
    total = 0
    for number, charset, mode, expected, sql in cases():
        total += 1
        conn = pymysql.connect(unix_socket=os.path.join(cluster_dir, str(port), 'mysqld.sock'), user='root',
                               charset='latin1', autocommit=True, binary_prefix=False)
        cur = conn.cursor()
        cur.execute('SET NAMES ' + charset + ', character_set_results = binary')
        if mode:
            cur.execute("SET sql_mode = '%s'" % mode)
        try:
            cur.execute(unescape(sql))
            rows = cur.fetchall()
            got = ' ; '.join(show(v) for v in rows[0]) if rows else '(no row)'
        except pymysql.MySQLError as e:
            got = 'ERR'
            detail = str(e)
        conn.close()
        if got != expected:
            failures += 1
            print('line %d: %s | %s | %s: expected %s, server says %s%s' %
                  (number, charset, mode, sql, expected, got, (' (' + detail + ')') if got == 'ERR' else ''))
    print('%d cases, %d differ from the server' % (total, failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
