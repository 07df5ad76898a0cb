# Raw MySQL-protocol client capturing prepared-statement exchanges with MariaDB.
# usage: psclient.py LOG PORT DEPRECATE_EOF(0|1)
import socket, sys, hashlib, struct
LOG = open(sys.argv[1], 'w')
port = int(sys.argv[2]); deprecate_eof = sys.argv[3] == '1'
s = socket.create_connection(('127.0.0.1', port))
def recv_exact(n):
    b = b''
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d: raise EOFError
        b += d
    return b
def read_packet():
    h = recv_exact(4); n = int.from_bytes(h[:3], 'little'); p = recv_exact(n)
    LOG.write(f"S {(h+p).hex()}\n"); LOG.flush()
    return h[3], p
def send_packet(seq, p):
    b = len(p).to_bytes(3, 'little') + bytes([seq]) + p
    LOG.write(f"C {b.hex()}\n"); LOG.flush()
    s.sendall(b)
def note(text): LOG.write(f"# {text}\n")
def native(pw, scramble):
    s1 = hashlib.sha1(pw).digest(); s2 = hashlib.sha1(s1).digest()
    x = hashlib.sha1(scramble + s2).digest()
    return bytes(a ^ b for a, b in zip(s1, x))
note('login')
seq, g = read_packet()
i = g.index(b'\0', 1); pos = i + 1 + 4
part1 = g[pos:pos+8]; pos += 9 + 2 + 1 + 2 + 2 + 1 + 10
scramble = part1 + g[pos:pos+12]
caps = (1<<0)|(1<<9)|(1<<15)|(1<<19)|(1<<3)|(1<<13)|(1<<16)|(1<<17)|(1<<18)
if deprecate_eof: caps |= 1<<24
resp = struct.pack('<IIB', caps, 16*1024*1024, 45) + b'\0'*23
resp += b'cap\0' + bytes([20]) + native(b'secret', scramble) + b'capdb\0' + b'mysql_native_password\0'
send_packet(1, resp)
seq, p = read_packet(); assert p[0] == 0, p
def is_end(p):
    return p[0] == 0xfe and len(p) < (0xffffff if deprecate_eof else 9)
def read_resultset_or_ok():
    seq, p = read_packet()
    if p[0] in (0x00, 0xff): return p
    n = p[0]
    for _ in range(n): read_packet()
    if not deprecate_eof: read_packet()
    while True:
        seq, p = read_packet()
        if p[0] == 0xff or is_end(p): return p
def prepare(sql):
    note('COM_STMT_PREPARE ' + sql)
    send_packet(0, b'\x16' + sql.encode())
    seq, p = read_packet()
    if p[0] == 0xff: return None
    sid, ncols, nparams = struct.unpack('<IHH', p[1:9])
    if nparams:
        for _ in range(nparams): read_packet()
        if not deprecate_eof: read_packet()
    if ncols:
        for _ in range(ncols): read_packet()
        if not deprecate_eof: read_packet()
    return sid, ncols, nparams
def execute(sid, params, bound=True, flags=0, comment=''):
    # params: list of (type, unsigned, value-bytes or None)
    note('COM_STMT_EXECUTE ' + comment)
    p = b'\x17' + struct.pack('<IBI', sid, flags, 1)
    if params:
        bm = bytearray((len(params) + 7) // 8)
        for i, (t, u, v) in enumerate(params):
            if v is None or v == LONG: bm[i // 8] |= 1 << (i % 8)
        p += bytes(bm) + bytes([1 if bound else 0])
        if bound:
            for t, u, v in params: p += bytes([t, 0x80 if u else 0])
        for t, u, v in params:
            if v is not None and v != LONG: p += v
    send_packet(0, p)
    return read_resultset_or_ok()
LONG = b'<long data: no bytes, NULL bit set as libmariadb does>'
def lenenc_str(b):
    n = len(b)
    if n < 251: return bytes([n]) + b
    if n < 65536: return b'\xfc' + struct.pack('<H', n) + b
    return b'\xfd' + struct.pack('<I', n)[:3] + b
def query(sql):
    note('COM_QUERY ' + sql)
    send_packet(0, b'\x03' + sql.encode())
    return read_resultset_or_ok()

# 1. every column type, binary and text
sid, nc, np_ = prepare('SELECT * FROM types WHERE id > ? ORDER BY id')
execute(sid, [(0x08, False, struct.pack('<q', 0))], comment='id > 0 (LONGLONG)')
query('SELECT * FROM types ORDER BY id')
# 2. parameters of every type, echoed back
echo = 'SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?'
sid2, nc, np_ = prepare(echo)
params = [
  (0x01, False, struct.pack('<b', -5)),                       # TINY
  (0x02, True, struct.pack('<H', 65535)),                     # SHORT unsigned
  (0x03, False, struct.pack('<i', -2147483648)),              # LONG
  (0x08, True, struct.pack('<Q', 18446744073709551615)),      # LONGLONG unsigned max
  (0x04, False, struct.pack('<f', 1.5)),                      # FLOAT
  (0x05, False, struct.pack('<d', -0.1)),                     # DOUBLE
  (0x0a, False, bytes([4]) + struct.pack('<HBB', 2024, 2, 29)),                              # DATE
  (0x0c, False, bytes([11]) + struct.pack('<HBBBBBI', 2024, 12, 31, 23, 59, 58, 123456)),   # DATETIME(6)
  (0x07, False, bytes([7]) + struct.pack('<HBBBBB', 2024, 1, 1, 0, 0, 1)),                  # TIMESTAMP
  (0x0b, False, bytes([12]) + struct.pack('<BIBBBI', 1, 34, 22, 59, 59, 500000)),           # TIME negative
  (0xf6, False, lenenc_str(b'-12345678901234.5678')),         # NEWDECIMAL
  (0xfd, False, lenenc_str(b'x' * 300)),                      # VAR_STRING long
  (0xfc, False, lenenc_str(bytes([0, 255, 1]))),              # BLOB
  (0x06, False, None),                                        # NULL type
  (0xfe, False, None),                                        # STRING, NULL
  (0x0d, False, struct.pack('<H', 2155)),                     # YEAR
]
execute(sid2, params, comment='16 params of every type')
params2 = [
  (0x01, False, struct.pack('<b', 127)), (0x02, True, None), (0x03, False, struct.pack('<i', 7)),
  (0x08, True, struct.pack('<Q', 0)), (0x04, False, struct.pack('<f', -2.0)), (0x05, False, struct.pack('<d', 1e300)),
  (0x0a, False, bytes([0])), (0x0c, False, bytes([4]) + struct.pack('<HBB', 1000, 1, 1)),
  (0x07, False, bytes([0])), (0x0b, False, bytes([8]) + struct.pack('<BIBBB', 0, 0, 1, 2, 3)),
  (0xf6, False, lenenc_str(b'0.5')), (0xfd, False, lenenc_str(b'')), (0xfc, False, None),
  (0x06, False, None), (0xfe, False, lenenc_str(b'abc')), (0x0d, False, struct.pack('<H', 0)),
]
execute(sid2, params2, bound=False, comment='same statement, new_params_bound=0')
# 3. long data
sid3, nc, np_ = prepare('SELECT CONCAT(?, ?)')
note('COM_STMT_SEND_LONG_DATA param 0')
send_packet(0, b'\x18' + struct.pack('<IH', sid3, 0) + b'long-')
note('COM_STMT_SEND_LONG_DATA param 0 again')
send_packet(0, b'\x18' + struct.pack('<IH', sid3, 0) + b'data')
execute(sid3, [(0xfc, False, LONG), (0xfd, False, lenenc_str(b'!'))], comment='param 0 from long data')
note('COM_STMT_RESET')
send_packet(0, b'\x1a' + struct.pack('<I', sid3)); read_packet()
# 4. cursor + fetch
sid4, nc, np_ = prepare('SELECT id, dtm6, tm FROM types ORDER BY id')
note('COM_STMT_EXECUTE read-only cursor')
send_packet(0, b'\x17' + struct.pack('<IBI', sid4, 1, 1))
seq, p = read_packet()
for _ in range(p[0]): read_packet()
if not deprecate_eof: read_packet()
else: read_packet()
note('COM_STMT_FETCH 3 rows')
send_packet(0, b'\x1c' + struct.pack('<II', sid4, 3))
while True:
    seq, p = read_packet()
    if p[0] == 0xff or is_end(p): break
note('COM_STMT_FETCH 3 rows')
send_packet(0, b'\x1c' + struct.pack('<II', sid4, 3))
while True:
    seq, p = read_packet()
    if p[0] == 0xff or is_end(p): break
# 5. errors, no-param statement, close
prepare('SELECT * FROM nosuch WHERE a = ?')
sid5, nc, np_ = prepare('DO 1')
execute(sid5, [], comment='no params, no columns: OK')
sid6, nc, np_ = prepare('UPDATE types SET ti = ? WHERE id = ?')
execute(sid6, [(0x01, False, struct.pack('<b', 1)), (0x03, False, struct.pack('<i', 1000))], comment='update, 0 rows')
note('COM_STMT_CLOSE')
send_packet(0, b'\x19' + struct.pack('<I', sid6))
execute(sid6, [(0x01, False, struct.pack('<b', 1)), (0x03, False, struct.pack('<i', 1000))], comment='closed statement: ERR')
send_packet(0, b'\x01')
