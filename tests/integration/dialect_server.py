#!/usr/bin/python3
"""Checks tests/unit/parser/dialect_cases.txt against a real MariaDB: every
case's SQL, sent as raw bytes in its charset and sql_mode, must give the
expected row (or an error for ERR). The same file drives the lexer's unit
test (tests/unit/parser/dialect_test.cpp), so the two agree through it.

  dialect_server.py [port [probe]]
      port:  default $SP_DB0_PORT or 3307; root over the socket of scripts/cluster
      probe: the dialect_probe binary; when given, every lead byte 0x80-0xFF of
             every multi-byte charset is also tried before each byte that
             matters to the lexer (\\ ' " ` and a few others), and the
             lexer's reading (through the probe) must equal the server's.
"""
import os
import re
import subprocess
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


class Server:
    def __init__(self, port):
        cluster_dir = os.environ.get('SP_CLUSTER_DIR', os.path.join(REPO, '.cluster'))
        self.socket = os.path.join(cluster_dir, str(port), 'mysqld.sock')
        self.conn = None
        self.session = None

    def row(self, charset, mode, sql):
        """The row the server returns for sql (bytes), shown as in the case file, or ERR."""
        if self.session != (charset, mode):
            if self.conn:
                self.conn.close()
            self.conn = pymysql.connect(unix_socket=self.socket, user='root', charset='latin1',
                                        autocommit=True, binary_prefix=False)
            self.conn.encoding = 'iso-8859-1'  # column names as raw bytes (pymysql's latin1 is cp1252)
            cur = self.conn.cursor()
            cur.execute('SET NAMES ' + charset + ', character_set_results = binary')
            cur.execute("SET sql_mode = '%s'" % mode)
            self.session = (charset, mode)
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
            rows = cur.fetchall()
            return ' ; '.join(show(v) for v in rows[0]) if rows else '(no row)'
        except pymysql.MySQLError:
            return 'ERR'


def byte_matrix():
    """Lead byte x following byte, for every multi-byte client charset."""
    follow = [0x5C, 0x27, 0x22, 0x60, 0x30, 0x40, 0x7E, 0x80, 0xA1, 0xDF, 0xFE, 0xFF]
    for charset in ['big5', 'gbk', 'gb2312', 'sjis', 'cp932', 'euckr', 'ujis', 'eucjpms', 'utf8mb4', 'latin1']:
        for lead in range(0x80, 0x100):
            for trail in follow:
                body = '%%%02X%%%02X' % (lead, trail)
                if charset in ('ujis', 'eucjpms') and lead == 0x8F:
                    body = '%%8F%%A1%%%02X' % trail
                yield charset, "SELECT '" + body + "', 'x', 1 -- ', 2"
                yield charset, 'SELECT `' + body + '` FROM (SELECT 5 AS `' + body + '`) t'


# Multi-statement texts: sent whole (CLIENT_MULTI_STATEMENTS) and then as the
# statements splitStatements() finds, one COM_QUERY each, on a fresh scratch
# schema: both must give the same number of results and end the same way (a
# procedure's or compound statement's own result sets count in both).
SPLIT_CASES = [
    ('utf8mb4', '', "SELECT 1; SELECT ';'; SELECT 3"),
    ('utf8mb4', '', "SELECT 1 /* ; */; SELECT 2 -- ;%0A; SELECT 3 # ;"),
    ('utf8mb4', '', "SELECT 1 /*!; SELECT 2 */"),
    ('utf8mb4', '', "SELECT 1 /*!99999 ; SELECT 2 */; SELECT 3"),
    ('utf8mb4', '', "SELECT 1 /*!50700 ; SELECT 2 */; SELECT 3"),
    ('gbk', '', "SELECT '%95\\'; SELECT 2"),
    ('utf8mb4', '', "SELECT '%95\\'; SELECT 2'"),
    ('utf8mb4', 'NO_BACKSLASH_ESCAPES', "SELECT 'a\\'; SELECT 2"),
    ('utf8mb4', 'ANSI_QUOTES', 'SELECT 1 AS "a;b"; SELECT 2'),
    ('utf8mb4', '', "CREATE PROCEDURE p1() BEGIN SELECT 1; SELECT 2; END; CALL p1(); SELECT 3"),
    ('utf8mb4', '', "CREATE TABLE t1 (a INT, b INT); CREATE TRIGGER tr1 BEFORE INSERT ON t1 FOR EACH ROW "
                    "BEGIN IF NEW.a > 0 THEN SET NEW.b = 1; ELSE SET NEW.b = 2; END IF; END; INSERT INTO t1 (a) VALUES (1)"),
    ('utf8mb4', '', "CREATE FUNCTION f1(x INT) RETURNS INT DETERMINISTIC BEGIN DECLARE y INT; "
                    "SET y = CASE WHEN x > 0 THEN 1 ELSE 2 END; RETURN y; END; SELECT f1(1)"),
    ('utf8mb4', '', "CREATE EVENT e1 ON SCHEDULE EVERY 1 HOUR DISABLE DO BEGIN DELETE FROM t1; END; SELECT 1"),
    ('utf8mb4', '', "BEGIN NOT ATOMIC DECLARE a INT; lbl: LOOP LEAVE lbl; END LOOP; SELECT 1; END; SELECT 2"),
    ('utf8mb4', '', "IF 1 THEN SELECT 1; ELSEIF 2 THEN SELECT 2; END IF; SELECT 3"),
    ('utf8mb4', '', "WHILE 0 DO SELECT 1; END WHILE; SELECT 3"),
    ('utf8mb4', '', "BEGIN NOT ATOMIC REPEAT SELECT 1; UNTIL 1 END REPEAT; END; SELECT 3"),
    ('utf8mb4', '', "BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN SELECT 1; END; SELECT 2; END; SELECT 3"),
    ('utf8mb4', '', "BEGIN NOT ATOMIC FOR i IN 1..3 DO SELECT i; END FOR; END; SELECT 3"),
    ('utf8mb4', '', "BEGIN; SELECT 1; COMMIT"),
    ('utf8mb4', '', "BEGIN WORK; SELECT 1; ROLLBACK"),
    ('utf8mb4', '', "SELECT IF(1, 2, 3), REPEAT('a', 2); SELECT CASE 1 WHEN 1 THEN 2 END; SELECT 3"),
    ('utf8mb4', '', "CREATE PROCEDURE IF NOT EXISTS p2() SELECT 1; CALL p2()"),
    ('utf8mb4', '', "CREATE FUNCTION f2() RETURNS INT RETURN IF(1, 2, 3); SELECT f2()"),
    ('utf8mb4', '', "CREATE TABLE t2 (a INT); SELECT 1 FROM t2 FOR UPDATE; SELECT 2"),
]


def server_results(port, charset, mode, texts):
    """Results (result sets and OKs) of each text in turn, stopping at the first error."""
    cluster_dir = os.environ.get('SP_CLUSTER_DIR', os.path.join(REPO, '.cluster'))
    conn = pymysql.connect(unix_socket=os.path.join(cluster_dir, str(port), 'mysqld.sock'), user='root',
                           charset='latin1', autocommit=True, client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
    conn.encoding = 'iso-8859-1'
    cur = conn.cursor()
    cur.execute('DROP DATABASE IF EXISTS dialect_scratch')
    cur.execute('CREATE DATABASE dialect_scratch')
    cur.execute('USE dialect_scratch')
    cur.execute('SET NAMES ' + charset + ', character_set_results = binary')
    cur.execute("SET sql_mode = '%s'" % mode)
    count, outcome = 0, 'ok'
    try:
        for text in texts:
            cur.execute(text)
            count += 1
            while cur.nextset():
                count += 1
    except pymysql.MySQLError as e:
        outcome = 'error %d' % e.args[0]
    cur.execute('DROP DATABASE dialect_scratch')
    conn.close()
    return '%d results, %s' % (count, outcome)


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get('SP_DB0_PORT', '3307'))
    probe = sys.argv[2] if len(sys.argv) > 2 else None
    server = Server(port)
    failures = 0
    total = 0
    for number, charset, mode, expected, sql in cases():
        total += 1
        got = server.row(charset, mode, unescape(sql))
        if got != expected:
            failures += 1
            print('line %d: %s | %s | %s: expected %s, server says %s' % (number, charset, mode, sql, expected, got))
    print('%d cases of dialect_cases.txt, %d differ from the server' % (total, failures))
    if probe:
        matrix = list(byte_matrix())
        lexer = subprocess.run([probe], input=''.join('%s\t\t%s\n' % (c, q) for c, q in matrix),
                               capture_output=True, text=True, encoding='latin1', check=True).stdout.splitlines()
        # A statement the server rejects while the lexer reads it (names with
        # bytes invalid in the charset) fails on every backend: harmless, counted
        # apart. Any other difference fails the test.
        differ = rejected = 0
        for (charset, sql), ours in zip(matrix, lexer):
            theirs = server.row(charset, '', unescape(sql))
            if theirs == 'ERR' and ours != 'ERR':
                rejected += 1
                continue
            ours_items, theirs_items = ours.split(' ; '), theirs.split(' ; ')
            same = ours == theirs or (len(ours_items) == len(theirs_items) and ours != 'ERR' and all(
                a == '*' or a.strip() == b.strip() for a, b in zip(ours_items, theirs_items)))
            if not same:
                differ += 1
                if differ <= 20:
                    print('%s: %s: lexer reads %s, server says %s' % (charset, sql, ours, theirs))
        print('%d byte-matrix statements: %d read differently by the lexer, %d rejected by the server only'
              % (len(matrix), differ, rejected))
        failures += differ
    if probe:
        spans = subprocess.run([probe], input=''.join('split:%s\t%s\t%s\n' % c for c in SPLIT_CASES),
                               capture_output=True, text=True, encoding='latin1', check=True).stdout.splitlines()
        for (charset, mode, sql), ranges in zip(SPLIT_CASES, spans):
            raw = unescape(sql)
            pieces = [raw[int(r.split('-')[0]):int(r.split('-')[1])] for r in ranges.split()]
            whole = server_results(port, charset, mode, [raw])
            split = server_results(port, charset, mode, pieces)
            if whole != split:
                failures += 1
                print('split %s | %s | %s: whole text gives %s, the %d statements found give %s' %
                      (charset, mode, sql, whole, len(pieces), split))
        print('%d multi-statement texts checked' % len(SPLIT_CASES))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
