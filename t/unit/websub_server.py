#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Real HTTP server for the rs_websub unit tests (t/unit/test_websub.c).

Usage: websub_server.py PORTFILE LOGFILE

Listens on 127.0.0.1 (a free port, written to PORTFILE once listening),
HTTP/1.1 with keep-alive, one thread per connection.  Paths:

  /ok/...            200 "ok"
  /status/N/...      status N (429 and 503 carry "Retry-After: 7")
  /slow/MS/...       sleeps MS milliseconds, then 200
  /echo/...          200 with the value of the hub.challenge query parameter
  /wrong/...         200 with a body that is not the challenge
  /big/N/...         200 with N bytes
  (3xx statuses carry "Location: /ok/redirected")

Every request is appended to LOGFILE as one line, fields percent-encoded
(empty field: "-"):

  BEGIN END METHOD TARGET CONTENT-TYPE LINK X-HUB-SIGNATURE BODY PEERPORT

PEERPORT is the client's port: requests on one kept-alive connection share it.

BEGIN and END are values of one counter shared by all requests, taken when
the request's headers have been read and just before the response is sent;
so "END of one < BEGIN of another" means the first was answered before the
second arrived.
"""
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTER = [0]


def tick():
    with LOCK:
        COUNTER[0] += 1
        return COUNTER[0]


def enc(s):
    if s is None or s == b"" or s == "":
        return "-"
    if isinstance(s, str):
        s = s.encode("latin-1")
    return urllib.parse.quote_from_bytes(s, safe="")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        begin = tick()
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/")
        status, extra, out = 200, {}, b"ok"
        if parts[1] == "status":
            status = int(parts[2])
            # 204 and 304 have no body (bytes after their headers would be
            # read as the next response of a reused connection).
            out = b"" if status in (204, 304) else b"status %d" % status
            if status in (429, 503):
                extra["Retry-After"] = "7"
            if 300 <= status < 400:
                extra["Location"] = "/ok/redirected"
        elif parts[1] == "slow":
            time.sleep(int(parts[2]) / 1000.0)
        elif parts[1] == "echo":
            q = urllib.parse.parse_qs(url.query)
            out = q.get("hub.challenge", [""])[0].encode()
        elif parts[1] == "big":
            out = b"x" * int(parts[2])
        elif parts[1] == "wrong":
            out = b"not-the-challenge"
        end = tick()
        line = " ".join([str(begin), str(end), self.command, enc(self.path),
                         enc(self.headers.get("Content-Type")), enc(self.headers.get("Link")),
                         enc(self.headers.get("X-Hub-Signature")), enc(body),
                         str(self.client_address[1])])
        with LOCK:
            with open(LOGFILE, "a") as f:
                f.write(line + "\n")
        try:
            self.send_response(status)
            for k, v in extra.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client gave up (timeout tests)

    do_GET = handle_any
    do_POST = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128          # many parallel clients; the default is 5

    def handle_error(self, request, client_address):
        pass   # clients that time out and close (timeout tests) are expected


if __name__ == "__main__":
    portfile, LOGFILE = sys.argv[1], sys.argv[2]
    srv = Server(("127.0.0.1", 0), Handler)
    open(LOGFILE, "a").close()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()
