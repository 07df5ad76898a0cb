# TCP relay 127.0.0.1:3395 -> 127.0.0.1:3396 logging each packet before forwarding it
# (so that the log order is the wire order).
import socket, sys, threading
LOG = open(sys.argv[1], 'w')
lock = threading.Lock()
def pump(src, dst, tag):
    buf = b''
    while True:
        data = src.recv(65536)
        if not data:
            dst.close(); return
        buf += data
        with lock:
            while len(buf) >= 4:
                n = int.from_bytes(buf[:3], 'little')
                if len(buf) < 4 + n: break
                LOG.write(f"{tag} {buf[:4+n].hex()}\n"); LOG.flush()
                dst.sendall(buf[:4+n])
                buf = buf[4+n:]
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', 3395)); ls.listen(1); ls.settimeout(60)
c, _ = ls.accept()
s = socket.create_connection(('127.0.0.1', 3396))
t1 = threading.Thread(target=pump, args=(c, s, 'C')); t2 = threading.Thread(target=pump, args=(s, c, 'S'))
t1.start(); t2.start(); t1.join(); t2.join()
