"""Free loopback ports for the proxies that integration tests start themselves.

Asking the kernel for port 0 one socket at a time can hand out the same port twice
once the first socket is closed, so two proxies of one test (or a proxy's listen and
admin ports) could be configured on one port: the second proxy then fails to bind
while the test talks to the first. Seen in CI as 1045 from the wrong proxy. Here all
ports of one request are held open together, and no port is handed out twice in
one process.
"""
import socket

HOST = "127.0.0.1"
_handed_out = set()


def free_ports(count):
    """count distinct free ports on 127.0.0.1, none returned before in this process."""
    held, ports = [], []
    try:
        while len(ports) < count:
            s = socket.socket()
            held.append(s)
            s.bind((HOST, 0))
            port = s.getsockname()[1]
            if port not in _handed_out:
                _handed_out.add(port)
                ports.append(port)
    finally:
        for s in held:
            s.close()
    return ports
