"""The interactive mariadb client without -A, on a pseudo-terminal.

Without -A the client builds its completion table at start-up and on USE: it
lists the tables and sends COM_FIELD_LIST for each one. Tab-completing a column
name that exists only in our table proves those field lists came back intact.
"""
import os
import pty
import select
import signal
import subprocess
import time
import unittest

from . import sptest

PROMPT = b"MariaDB [im]> "


class Terminal:
    def __init__(self, argv):
        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="dumb", HOME=os.environ.get("HOME", "/tmp"))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.output = b""

    def read_until(self, needle, timeout_s=20):
        deadline = time.monotonic() + timeout_s
        while needle not in self.output:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {needle!r}; screen so far:\n"
                                     f"{self.output.decode(errors='replace')}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the client exited
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"client exited while waiting for {needle!r}:\n"
                                         f"{self.output.decode(errors='replace')}")
                self.output += chunk
        index = self.output.index(needle) + len(needle)
        before, self.output = self.output[:index], self.output[index:]
        return before

    def send(self, text):
        os.write(self.master, text.encode())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


class InteractiveClient(unittest.TestCase):
    def setUp(self):
        self.conn = sptest.proxy()
        self.table = sptest.unique_name("it_ia")
        self.column = "zq" + self.table[-8:] + "_col"  # no other column starts like this
        sptest.query(self.conn, f"CREATE TABLE {self.table} (id INT, {self.column} INT)")
        sptest.query(self.conn, f"INSERT INTO {self.table} VALUES (1, 41)")

    def tearDown(self):
        sptest.query(self.conn, f"DROP TABLE IF EXISTS {self.table}")
        self.conn.close()

    def test_client_without_A_completes_column_names(self):
        term = Terminal(["mariadb", "--no-defaults", "-h", sptest.HOST, "-P", str(sptest.PROXY_PORT),
                         "-uapp", "-papp_pw", "--default-character-set=utf8mb4", "im"])
        try:
            banner = term.read_until(PROMPT)
            self.assertNotIn(b"ERROR", banner)
            # Tab completion of a column known only through COM_FIELD_LIST.
            term.send(f"SELECT {self.column[:6]}\t")
            completed = term.read_until(self.column.encode())
            self.assertNotIn(b"ERROR", completed)
            term.send(f" + 1 AS answer FROM {self.table};\n")
            result = term.read_until(PROMPT)
            self.assertIn(b" 42 |", result)
            # USE rebuilds the completion table (field lists again).
            term.send("USE im\n")
            self.assertIn(b"Database changed", term.read_until(PROMPT))
            term.send("SELECT 'still here';\n")
            self.assertIn(b"still here", term.read_until(PROMPT))
            term.send("\\q\n")
            term.read_until(b"Bye")
            self.assertEqual(term.proc.wait(10), 0)
        finally:
            term.close()

    @staticmethod
    def client_with_A():
        return Terminal(["mariadb", "--no-defaults", "-A", "-h", sptest.HOST, "-P", str(sptest.PROXY_PORT),
                         "-uapp", "-papp_pw", "im"])

    def answer_and_exit(self, term):
        term.send("SELECT 6 * 7;\n")
        self.assertIn(b"42", term.read_until(PROMPT))
        term.send("exit\n")
        term.read_until(b"Bye")
        self.assertEqual(term.proc.wait(10), 0)

    def test_client_with_A_starts_without_field_lists(self):
        term = self.client_with_A()
        try:
            term.read_until(PROMPT)
            self.answer_and_exit(term)
        finally:
            term.close()

    def test_ctrl_c_kills_the_running_query(self):
        # On SIGINT the client opens a second connection and sends KILL QUERY
        # with the thread id of its handshake: the proxy's id, which the proxy
        # must carry out itself (forwarded, it would name some backend thread).
        term = self.client_with_A()
        try:
            term.read_until(PROMPT)
            term.send("SELECT SLEEP(30) AS slept;\n")
            time.sleep(1.0)
            started = time.monotonic()
            term.proc.send_signal(signal.SIGINT)
            answer = term.read_until(PROMPT, timeout_s=10)
            self.assertLess(time.monotonic() - started, 10)
            self.assertIn(b"query killed", answer)
            self.assertIn(b"ERROR 1317", answer)
            self.answer_and_exit(term)  # the same client session goes on
        finally:
            term.close()


if __name__ == "__main__":
    unittest.main()
