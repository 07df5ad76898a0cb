#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target, generated from the project's
own test data, into OUT/<target>/ (one file per input):

  sql            every query of tests/unit/parser/golden/*.txt (SQL: lines) and
                 tests/unit/routing/golden/*.txt (sql> lines)
  config         conf/*.yaml
  shard_map      conf/shard_map.yaml, tests/unit/routing/golden/shard_map.yaml
  protocol       payloads captured from MariaDB (tests/unit/protocol/captured_*.inc)
  packet         the captured sessions as framed byte streams
  prepared       captured COM_STMT_* commands and binary rows, with the
                 parameter count / column types the target's input header needs
  session_track  session_state_info blocks of captured OK packets and a few built here
  login          the captured connection phases: the client's packets for the
                 server role (setup bytes 0x00, 0x04, 0x08), the server's for the
                 client role (0x01, 0x03)

scripts/fuzz runs it before fuzzing; the committed corpora (tests/fuzz/<target>/corpus)
are small hand-kept sets and crash regressions.
Usage: seeds.py OUT
"""
import hashlib
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def write(out, target, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def golden_queries():
    for f in sorted((ROOT / "tests/unit/parser/golden").glob("*.txt")):
        for line in f.read_text(errors="surrogateescape").splitlines():
            if line.startswith("SQL: "):
                yield line[5:].replace("\\n", "\n")
    for f in sorted((ROOT / "tests/unit/routing/golden").glob("*.txt")):
        for line in f.read_text(errors="surrogateescape").splitlines():
            if line.startswith("sql> "):
                yield line[5:].replace("\\n", "\n")


def captured_sessions():
    """{name: [(from_server, framed bytes)]} from the captured_*.inc files."""
    sessions = {}
    for f in sorted((ROOT / "tests/unit/protocol").glob("captured_*.inc")):
        text = f.read_text()
        for m in re.finditer(r"inline const CapturedPacket (\w+)\[\] = \{(.*?)\n\};", text, re.S):
            packets = []
            for p in re.finditer(r"\{(true|false),((?:\s*\"[0-9a-f]*\")+)\}", m.group(2)):
                hexes = "".join(re.findall(r"\"([0-9a-f]*)\"", p.group(2)))
                packets.append((p.group(1) == "true", bytes.fromhex(hexes)))
            sessions[m.group(1)] = packets
    return sessions


def lenenc(n):
    if n < 251:
        return bytes([n])
    if n < 1 << 16:
        return b"\xfc" + struct.pack("<H", n)
    return b"\xfd" + struct.pack("<I", n)[:3]


def lenenc_str(s):
    return lenenc(len(s)) + s


def prepared_seeds(out, sessions):
    for packets in sessions.values():
        params = {}  # statement id -> parameter count, from PREPARE_OK
        last_params = 0
        types = []
        for from_server, framed in packets:
            payload = framed[4:]
            if not payload:
                continue
            if from_server:
                if len(payload) in (12, 13) and payload[0] == 0 and payload[9] == 0:
                    stmt_id, _cols, nparams = struct.unpack("<IHH", payload[1:9])
                    params[stmt_id] = last_params = nparams
                elif payload[:4] == b"\x03def" and len(payload) > 13:
                    types.append((payload[-6], payload[-5] & 0x20))
                elif payload[0] == 0 and types and len(types) < 24:
                    header = bytes([len(types), 0])
                    header += b"".join(bytes([t, 0x80 if u else 0]) for t, u in types)
                    write(out, "prepared", header + payload)
                elif payload[0] not in (0, 0xfe):
                    types = []  # a column count starts a new result set
            else:
                if payload[0] == 0x17 and len(payload) >= 5:
                    n = params.get(struct.unpack("<I", payload[1:5])[0], last_params)
                    write(out, "prepared", bytes([n % 24, 0]) + payload)
                elif payload[0] in (0x16, 0x18, 0x19, 0x1a, 0x1c):
                    write(out, "prepared", bytes([0, 0]) + payload)


def session_track_seeds(out):
    def entry(kind, data):
        return bytes([kind]) + lenenc_str(data)
    sysvar = entry(0, lenenc_str(b"autocommit") + lenenc_str(b"OFF"))
    schema = entry(1, lenenc_str(b"im"))
    state = entry(2, b"1")
    gtids = entry(3, b"\x00" + lenenc_str(b"0-1-42"))
    chars = entry(4, lenenc_str(b"SET TRANSACTION READ ONLY;"))
    tx = entry(5, lenenc_str(b"T_______"))
    for blob in (sysvar, schema, state, gtids, chars, tx, sysvar + schema + state + tx,
                 entry(0, lenenc_str(b"sql_mode") + lenenc_str(b"ANSI_QUOTES")) + state):
        write(out, "session_track", blob)
        # The same entries inside an OK packet (SERVER_SESSION_STATE_CHANGED 0x4000, no info).
        write(out, "session_track", b"\x00\x00\x00\x02\x40\x00\x00" + lenenc_str(b"") + lenenc_str(blob))


def main():
    out = pathlib.Path(sys.argv[1])
    for q in golden_queries():
        write(out, "sql", q)
    for f in sorted((ROOT / "conf").glob("*.yaml")):
        write(out, "config", f.read_bytes())
    for f in (ROOT / "conf/shard_map.yaml", ROOT / "tests/unit/routing/golden/shard_map.yaml"):
        write(out, "shard_map", f.read_bytes())
    sessions = captured_sessions()
    for packets in sessions.values():
        for from_server, framed in packets:
            write(out, "protocol", framed[4:])
        for side in (True, False):
            stream = b"".join(framed for s, framed in packets if s == side)
            write(out, "packet", b"\x05\x00" + stream[:4096])
            write(out, "packet", b"\x04\x03" + stream[:4096])
    prepared_seeds(out, sessions)
    session_track_seeds(out)
    login_seeds(out, sessions)


def login_seeds(out, sessions):
    """The connection phase of each captured session: packets up to the first
    command (the sequence ids restart at 0)."""
    for packets in sessions.values():
        phase = []
        for i, (from_server, framed) in enumerate(packets):
            if i > 0 and framed[3] == 0:
                break
            phase.append((from_server, framed))
        client = b"".join(f for s, f in phase if not s)
        server = b"".join(f for s, f in phase if s)
        for setup in (0x00, 0x04, 0x08):
            write(out, "login", bytes([setup]) + client)
        for setup in (0x01, 0x03):
            write(out, "login", bytes([setup]) + server)


if __name__ == "__main__":
    main()
