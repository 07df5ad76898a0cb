import sys
def emit(name, path, desc):
    out = [f"// {desc}", f"inline const CapturedPacket {name}[] = {{"]
    idx = 0
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('# '):
            out.append(f"    // {line[2:]}"); continue
        tag, hx = line.split(' ')
        chunks = [hx[i:i+80] for i in range(0, len(hx), 80)]
        body = '"\n         "'.join(chunks)
        out.append(f"    /* {idx:3d} */ {{{'true' if tag == 'S' else 'false'}, \"{body}\"}},")
        idx += 1
    out.append("};")
    return '\n'.join(out)
hdr = '''// Prepared-statement exchanges captured from a real MariaDB 10.11.19 server
// (Debian 12 package 10.11.19-MariaDB-0+deb12u1), started as a throwaway instance:
//   mariadb-install-db --no-defaults --datadir=/tmp/pscap/data --auth-root-authentication-method=normal
//   mariadbd --no-defaults --datadir=/tmp/pscap/data --port=3396 --bind-address=127.0.0.1 --user=root
// with CREATE USER 'cap'@'%' IDENTIFIED BY 'secret'; GRANT ALL ON capdb.* TO 'cap'@'%';
//   CREATE TABLE capdb.types (id INT NOT NULL PRIMARY KEY,
//     ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
//     mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
//     y YEAR, f FLOAT, d DOUBLE, dec1 DECIMAL(20,4), dt DATE, dtm DATETIME, dtm6 DATETIME(6),
//     ts TIMESTAMP(3) NULL DEFAULT NULL, tm TIME, tm6 TIME(6), vc VARCHAR(300), ch CHAR(5),
//     tx TEXT, bl BLOB, en ENUM('a','bb'), st SET('x','y'), bt BIT(10), js JSON,
//     zf INT(6) ZEROFILL, fd DOUBLE(10,3));
// and four rows: 1 = extremes (-128, 255, ..., 18446744073709551615, 3.14159,
// 0.30000000000000004, -12345678901234.5678, '2024-02-29', DATETIME(6)
// '2024-01-01 00:00:00.000001', TIMESTAMP(3) '...12:00:00.125', TIME '-838:59:59',
// TIME(6) '-00:00:00.5', REPEAT('x',300), X'00FF01', JSON, ZEROFILL 42, 2.5),
// 2 = all NULL, 3 = zeros and empty values ('0000-00-00', 1e-7, 1e300, -0.001),
// 4 = other extremes (max BIGINT, 2^63 unsigned, YEAR 2155, -1.5e38, '9999-12-31',
// 'ü', 400-byte TEXT, 300-byte BLOB).
// Scripts: tests/unit/protocol/capture/ (README.md there says how to rerun).
// The client is a raw Python socket script (server-side bytes are the server's;
// client commands are the script's, built per the protocol documentation):
// prepare + execute of SELECT * FROM types, the same rows through COM_QUERY,
// a 16-parameter echo statement executed with new_params_bound 1 then 0, long
// data, reset, a read-only cursor with two COM_STMT_FETCHes, a failed prepare,
// a no-parameter statement, an UPDATE, close, and an execute after close.
#pragma once

#include "captured_mariadb.inc"

namespace sp::protocol::test {

'''
print(hdr + emit('kPreparedClassicEof', 'cap_eof.txt', 'Classic EOF packets (no CLIENT_DEPRECATE_EOF).') + '\n\n' +
      emit('kPreparedDeprecateEof', 'cap_deof.txt', 'The same script with CLIENT_DEPRECATE_EOF.') +
      '\n\n' + emit('kPreparedLibmariadb', 'cap_libmariadb.txt', '''The libmariadb 3.3 C API (mysql_stmt_*) through a TCP relay that logged every
// packet before forwarding it: extended capabilities 0x1d negotiated (metadata
// caching, extended type info), classic EOF. A 12-parameter echo statement
// (TINY -7, SHORT unsigned 65535, LONG -123456, LONGLONG unsigned max, FLOAT
// 3.25, DOUBLE 2.5e-300, DATE, DATETIME with microseconds, TIME -838:59:59
// (libmariadb sends hour 838 truncated to one byte: 70), STRING of 300 bytes,
// NEWDECIMAL, NULL) executed twice (the second time without the types), then
// SELECT CONCAT(?, 'x'), ? + 1 with parameter 0 sent as two long-data chunks,
// then both statements closed.''') + '\n\n}  // namespace sp::protocol::test')
