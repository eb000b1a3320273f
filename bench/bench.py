#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench.py - the mod_resourcesync benchmark harness (run it through bench/run).

Every figure is a ratio of our time (or rate, or memory) to a baseline
measured in the same run, on the same tree, on the same machine:

  1  initial scan, no hashes      rs-tool scan / the module's first scan
                                  vs  find DIR -type f -printf '%s %T@ %p\\n'
  2  initial scan with hashes     rs-tool scan --hash md5 | sha-256 | both,
                                  the module's first scan with md5 sha-256
                                  vs  find -print0 | xargs -0 md5sum / sha256sum
  3  writing the Resource List    rs-tool list --max 50000 (index + parts);
                                  the module's snapshot after its first scan
                                  vs  find -printf writing the same fields as XML
  4  serving an unchanged part    requests/s of the module's 50,000-entry part
                                  vs  the same bytes as a static file (wrk),
                                  both with EnableSendfile Off, then both On
  5  child peak RSS               VmHWM of the httpd child after fetching every
                                  part: a set of N files vs a set of N/10
  6  live latency                 close of a file -> its entry seen in the open
                                  Change List by a poller (p50, p99) at 100 and
                                  1,000 changes/s
                                  vs  the same writer and poller, the file polled
                                  as a static file until it answers 200
  7  journal throughput           changes/s listed at stepped offered rates, and
                                  a burst drained
                                  vs  the writer alone in a directory no set covers
  8  polling the open list        304 polls/s of the open Change List (wrk with
                                  If-None-Match)
                                  vs  304s of a static file in the same server
  9  the watcher's memory         VmRSS of rs-watcher while it journals 10^6
                                  changes (rewrites, creates and deletes in a
                                  pool of files; lists closing, retention):
                                  after warm-up (5%), at 50% and at 100%,
                                  growth per 100,000 changes; flat or not
 10  Resource List freshness      close of a file (or its unlink) -> a Resource
                                  List showing it (p50, p99, max) at 1 and 100
                                  changes/s in the set of the tree, and the bytes
                                  a destination following the list reads per
                                  change (parts it holds answer 304)
                                  vs  the same changes seen in the open Change
                                  List at the same time (followed with byte
                                  ranges); the whole list read at each new index
 11  tail-following bytes         bytes read per change by a destination that
                                  follows the open Change List with Range and
                                  If-Range, at 100 changes/s
                                  vs  figure 6's poller re-reading the whole open
                                  list at each poll that finds something new;
                                  and the mean bytes of one entry (the floor)
 12  the watcher's peak at start  VmHWM of rs-watcher after a restart (startup
                                  reconciliation, first snapshot, the jobs a
                                  start runs) on a store holding 0, 50,000 and
                                  500,000 retained changes of a 7,000-file set
                                  vs  the first watcher on a fresh store

Repetitions of ours and the baseline are interleaved and the median is
reported.  Nothing here asserts: a missed target is reported, not fatal.
Only 127.0.0.1 is contacted; every server started is stopped in a finally
block and on SIGTERM/SIGINT/SIGHUP (bench/run adds a last-resort cleanup).
"""
import argparse
import datetime
import http.client
import multiprocessing
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RS_TOOL = os.path.join(TOP, "build", "rs-tool")
MODULE = os.path.join(TOP, "build", "mod_resourcesync.so")
HTTPD = os.environ.get("HTTPD", "/usr/sbin/apache2")
MODS = os.environ.get("HTTPD_MODULES", "/usr/lib/apache2/modules")
SET = "bench"
MAX_ENTRIES = 50000
DEFAULT_FIGURES = "1,2,3,4,5,6,7,8,9,10,11,12"

# Working targets of the benchmark (ratio ours/baseline unless noted).
# They say what "good" means for this module; they are not asserted.
TARGETS = {
    # The issue's targets (ratio = ours / baseline measured in the same run).
    "1e": ("<=", 1.5),    # initial scan, hashes off, vs find -printf
    "1m": ("<=", 1.5),    # the same for the module's first scan
    "2":  ("<=", 1.2),    # initial scan with md5 vs md5sum (and both vs the sum)
    "2s": ("<=", 0.5),    # initial scan with sha-256 vs sha256sum
    "3":  ("<=", 0.5),    # every part of the Resource List vs find -printf as XML
    "4":  (">=", 0.9),    # unchanged 50,000-entry part vs the same bytes as a static file
    "5":  ("<=", 1.1),    # child peak RSS, 10x the entries: flat
    # Live change tracking.  A third element means the target applies to
    # our value itself (in that unit), not to the ratio.
    "6":  ("<=", 50, "ms"),  # p99 from a file's close to its entry in the open
                             # Change List, at 1,000 changes/s
    "8":  (">=", 0.9),    # 304 polls/s of the open Change List vs a static file's 304s
    "9":  ("<=", 4096, "kB"),  # growth of the watcher's VmRSS from 5% to 100% of
                               # 10^6 journaled changes: flat
    "10": ("<=", 1500, "ms"),  # p50 from a change to a Resource List showing it, at
                               # the lowest rate (1 change/s): about 1 s of quiet
    "12": ("<=", 1.1),    # the watcher's peak after a restart on 10x the retained
                          # journal (500,000 vs 50,000 changes): flat
    "i":  None,           # informational
}


class Stop(Exception):
    """Raised by the signal handler: unwind and clean up."""


def on_signal(signum, frame):
    raise Stop("signal %d" % signum)


def log(msg):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def vm_hwm(pid):
    """Peak resident set size of a process in kB (VmHWM), or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def children_of(ppid):
    """[(pid, comm)] of the processes whose parent is ppid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may contain spaces or parentheses
        r = st.rfind(")")
        fields = st[r + 2:].split()
        if int(fields[1]) == ppid:
            out.append((int(d), st[st.find("(") + 1:r]))
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


class Server:
    """A private httpd (prefork, a fixed number of children) with one set."""

    def __init__(self, bench, name, www, setdir, hashes, children, max_entries=MAX_ENTRIES,
                 set_extra="", rescan=86400, server_extra=""):
        self.bench = bench
        self.max_entries = max_entries
        self.set_extra = set_extra
        self.rescan = rescan
        self.server_extra = server_extra
        self.dir = os.path.join(bench.work, "srv-" + name)
        self.www = www
        self.setdir = setdir
        self.hashes = hashes
        self.children = children
        self.port = free_port()
        self.pid = None
        self.started = False     # "httpd -k start" was run (a pid file may follow)
        self.known = []          # pids of children and watcher seen
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        for d in ("logs", "run"):
            os.makedirs(os.path.join(self.dir, d))
        self.conf = os.path.join(self.dir, "httpd.conf")
        self.error_log = os.path.join(self.dir, "logs", "error_log")
        self.write_conf()

    def write_conf(self):
        k = self.children
        user = "User nobody\nGroup nogroup\n" if os.geteuid() == 0 else ""
        conf = f"""# generated by bench/bench.py
ServerRoot "{self.dir}"
Listen 127.0.0.1:{self.port}
ServerName 127.0.0.1:{self.port}
PidFile {self.dir}/httpd.pid
ErrorLog {self.error_log}
LogLevel warn resourcesync:info
DefaultRuntimeDir {self.dir}/run
Mutex file:{self.dir}/run default
{user}
LoadModule mpm_prefork_module {MODS}/mod_mpm_prefork.so
StartServers {k}
MinSpareServers {k}
MaxSpareServers {k + 1}
ServerLimit {k}
MaxRequestWorkers {k}
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
LoadModule authz_core_module {MODS}/mod_authz_core.so
LoadModule authz_host_module {MODS}/mod_authz_host.so
LoadModule mime_module {MODS}/mod_mime.so
TypesConfig /etc/mime.types

LoadModule resourcesync_module {MODULE}
ResourceSyncStateDir {self.dir}/state
# no periodic rescan while we measure (figure 9: ticks every few seconds)
ResourceSyncRescanInterval {self.rescan}

DocumentRoot "{self.www}"
<Directory "{self.www}">
    Require all granted
</Directory>
{self.server_extra}
# Figure 4 compares like with like: the module's part and its static copy
# (/static/part.xml) are both served with httpd's defaults (EnableSendfile
# Off: mmap), and both with EnableSendfile On when the query string is
# "sendfile" (<If> applies to the module's URLs and to files alike).
<If "%{{QUERY_STRING}} == 'sendfile'">
    EnableSendfile On
</If>
<Directory "{self.setdir}">
    ResourceSyncSet {SET}
    ResourceSyncHash {self.hashes}
    ResourceSyncMaxEntries {self.max_entries}
{self.set_extra}</Directory>
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def command(self):
        return [HTTPD, "-d", self.dir, "-f", self.conf, "-k", "start"]

    def start(self):
        self.bench.note_cmd("module server", " ".join(self.command()))
        self.started = True
        r = subprocess.run(self.command(), start_new_session=True, timeout=60,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise RuntimeError("httpd did not start: %s" % r.stdout.decode(errors="replace"))
        self.read_pid(20)
        if not self.pid:
            raise RuntimeError("httpd wrote no pid file (see %s)" % self.error_log)
        self.remember()

    def read_pid(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with open(os.path.join(self.dir, "httpd.pid")) as f:
                    self.pid = int(f.read().strip())
                return
            except (OSError, ValueError):
                time.sleep(0.1)

    def remember(self):
        for pid, _ in children_of(self.pid):
            if pid not in self.known:
                self.known.append(pid)

    def log_text(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_log(self, regex, timeout):
        """Wait (bounded) for a line of the error log matching regex."""
        rx = re.compile(regex)
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in self.log_text().splitlines():
                m = rx.search(line)
                if m:
                    self.remember()
                    return line, m
            if self.pid and not os.path.exists("/proc/%d" % self.pid):
                raise RuntimeError("httpd %d died (see %s)" % (self.pid, self.error_log))
            text = self.log_text()
            if re.search(r"\[resourcesync:(error|crit|alert|emerg)\]", text):
                raise RuntimeError("module error (see %s)" % self.error_log)
            if re.search(r"watcher \(pid \d+\) died", text):
                # A replacement would scan again: its times measure nothing.
                raise RuntimeError("the watcher died (see %s)" % self.error_log)
            time.sleep(0.2)
        raise RuntimeError("timeout after %d s waiting for /%s/ in %s"
                           % (timeout, regex, self.error_log))

    def first_lists(self, timeout):
        """Wait for the first scan's "scanned" and "published" lines; sets
        scan_files, scan_time, publish_time (scanned -> published, s),
        entries and parts."""
        scan_line, m = self.wait_log(r"set %s: scanned (\d+) files .* in ([0-9.]+) s" % SET,
                                     timeout)
        pub_line, pm = self.wait_log(r"set %s: published Resource List (\d+) \((\d+) entries, "
                                     r"(\d+) parts[,)]" % SET, timeout)
        self.scan_files = int(m.group(1))
        self.scan_time = float(m.group(2))
        self.publish_time = apache_time(pub_line) - apache_time(scan_line)
        self.entries = int(pm.group(2))
        self.parts = int(pm.group(3))

    def workers(self):
        """pids of the httpd children that serve requests (not the watcher)."""
        return [pid for pid, comm in children_of(self.pid) if comm != "rs-watcher"]

    def watcher(self):
        for pid, comm in children_of(self.pid):
            if comm == "rs-watcher":
                return pid
        return None

    def stop(self):
        if not self.pid and self.started:
            self.read_pid(5)     # interrupted while starting
        self.started = False
        if not self.pid:
            return
        pid, self.pid = self.pid, None
        self.known += [p for p, _ in children_of(pid) if p not in self.known]
        mine = self.conf
        if mine in cmdline(pid):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.time() + 15
            while time.time() < deadline and os.path.exists("/proc/%d" % pid):
                time.sleep(0.1)
            if os.path.exists("/proc/%d" % pid) and mine in cmdline(pid):
                os.kill(pid, signal.SIGKILL)
        # children and watcher normally go with the parent; make sure
        deadline = time.time() + 10
        while time.time() < deadline and any(mine in cmdline(p) for p in self.known):
            time.sleep(0.1)
        for p in self.known:
            if mine in cmdline(p):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            os.unlink(os.path.join(self.dir, "httpd.pid"))
        except OSError:
            pass


def http_get(conn, path, sink=None):
    """GET path on a keep-alive connection; returns (status, bytes, body or None).
    With sink, the body is streamed to sink(chunk) and not kept."""
    conn.request("GET", path)
    resp = conn.getresponse()
    n = 0
    parts = [] if sink is None else None
    while True:
        chunk = resp.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
        if sink is None:
            parts.append(chunk)
        else:
            sink(chunk)
    return resp.status, n, (b"".join(parts) if parts is not None else None)


class EntryCounter:
    """Counts <url> entries in a stream of chunks."""

    def __init__(self):
        self.n = 0
        self.tail = b""

    def __call__(self, chunk):
        buf = self.tail + chunk
        self.n += buf.count(b"</url>")
        self.tail = buf[-5:] if not buf.endswith(b"</url>") else b""


def fetch_all(port, list_path, query="", timeout=600):
    """Fetch the Resource List and every part over one keep-alive connection,
    each URL with query appended.  Returns (documents, entries, bytes,
    [part paths without the query])."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        st, n, body = http_get(conn, list_path + query)
        if st != 200:
            raise RuntimeError("GET %s: %d" % (list_path, st))
        total, docs = n, 1
        if b"<sitemapindex" in body[:1000]:
            parts = [urllib.parse.urlsplit(u.decode()).path
                     for u in re.findall(rb"<loc>([^<]*)</loc>", body)]
            counter = EntryCounter()
            for p in parts:
                st, n, _ = http_get(conn, p + query, counter)
                if st != 200:
                    raise RuntimeError("GET %s: %d" % (p, st))
                total += n
                docs += 1
            return docs, counter.n, total, parts
        return docs, body.count(b"</url>"), total, []
    finally:
        conn.close()


def parse_wrk(out):
    """(requests/s, requests, [error lines]) from wrk's output."""
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    c = re.search(r"(\d+) requests in", out)
    if not m or not c:
        raise RuntimeError("cannot read wrk output:\n" + out)
    errors = []
    for rx in (r"Non-2xx or 3xx responses: \d+", r"Socket errors: [^\n]+"):
        e = re.search(rx, out)
        if e:
            errors.append(e.group(0))
    return float(m.group(1)), int(c.group(1)), errors


def apache_time(line):
    """Timestamp of an error log line, in seconds since the epoch."""
    m = re.match(r"\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d\.\d+ \d{4})\]", line)
    return datetime.datetime.strptime(m.group(1), "%a %b %d %H:%M:%S.%f %Y").timestamp()


# -- live change tracking (figures 6, 7, 8): writer and pollers ----------------
# They run in processes of their own (fork), so that the writer, the poller
# and the harness do not share an interpreter lock.  Every time is
# time.monotonic_ns() (CLOCK_MONOTONIC, the same clock in every process).

LOC_RX = re.compile(rb"<loc>([^<]*)</loc>")
ENTRY_RX = re.compile(rb"<loc>([^<]*)</loc>.*?datetime=\"([^\"]*)\"", re.S)
SITEMAP_RX = re.compile(rb"<sitemap>(.*?)</sitemap>", re.S)
NEW_BODY = b"n" * 100        # a created file: 100 bytes
REWRITE_BODY = b"u" * 150    # a rewritten file: 150 bytes (was 100)


def child_signals():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def writer_proc(changes, rate, out):
    """Make each change of changes [(path, kind)], kind "c" (create, write,
    close a new file), "u" (rewrite an existing one) or "d" (delete an
    existing one), at `rate` changes/s on a fixed schedule (0: as fast as
    possible); send (start, [time of each close or unlink], [the wall clock
    at each])."""
    child_signals()
    os.umask(0o022)
    mono, sleep = time.monotonic_ns, time.sleep
    flags_c = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags_u = os.O_WRONLY | os.O_TRUNC
    period = int(1e9 / rate) if rate else 0
    times, walls = [], []
    wall = time.time_ns
    start = mono() + 2000000
    while mono() < start:
        sleep(0.0005)
    for i, (path, kind) in enumerate(changes):
        if period:
            d = start + i * period - mono()
            if d > 0:
                sleep(d / 1e9)
        if kind == "d":
            times.append(mono())     # just before the unlink
            walls.append(wall())
            os.unlink(path)
            continue
        if kind == "c":
            fd = os.open(path, flags_c, 0o644)
            os.write(fd, NEW_BODY)
        else:
            fd = os.open(path, flags_u)
            os.write(fd, REWRITE_BODY)
        times.append(mono())     # just before the close: latencies are never
        walls.append(wall())     # shortened by the writer being preempted
        os.close(fd)
    out.send((start, times, walls))
    out.close()


class Poller:
    """A minimal HTTP/1.1 client on one keep-alive connection (Content-Length
    and chunked bodies): GET with an optional If-None-Match and extra request
    headers (Range, If-Range).  About four times cheaper per request than
    http.client, whose header parsing would otherwise be most of the
    observation floor.  Counts requests, 200s, 206s, the bytes of their
    bodies, and the bytes of every response's head."""

    def __init__(self, port):
        self.port = port
        self.sock = None
        self.buf = bytearray()
        self.pos = 0
        self.requests = 0
        self.ok = 0
        self.partial = 0
        self.bytes = 0
        self.head_bytes = 0

    def counters(self):
        return dict(requests=self.requests, ok=self.ok, partial=self.partial,
                    bytes=self.bytes, head_bytes=self.head_bytes)

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None

    def _need(self, n):
        """At least n unread bytes in the buffer."""
        while len(self.buf) - self.pos < n:
            d = self.sock.recv(1 << 20)
            if not d:
                raise ConnectionError("connection closed by the server")
            self.buf += d

    def _find(self, sep):
        while True:
            i = self.buf.find(sep, self.pos)
            if i >= 0:
                return i
            self._need(len(self.buf) - self.pos + 1)

    def get(self, path, etag=None, headers=None):
        """(status, ETag, body).  A kept-alive connection that the server
        closed meanwhile is opened again once."""
        reused = self.sock is not None
        try:
            return self._get(path, etag, headers)
        except (ConnectionError, BrokenPipeError):
            self.close()
            if not reused:
                raise
            return self._get(path, etag, headers)

    def _get(self, path, etag, headers):
        if not self.sock:
            self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.buf, self.pos = bytearray(), 0
        extra = "".join("%s: %s\r\n" % kv for kv in (headers or {}).items())
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s\r\n"
                           % (path, "If-None-Match: %s\r\n" % etag if etag else "",
                              extra)).encode())
        h = self._find(b"\r\n\r\n")
        lines = self.buf[self.pos:h].decode("latin-1").split("\r\n")
        self.head_bytes += h + 4 - self.pos
        self.pos = h + 4
        status = int(lines[0].split()[1])
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if status in (204, 304):
            body = b""
        elif "content-length" in hdrs:
            n = int(hdrs["content-length"])
            self._need(n)
            body = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                e = self._find(b"\r\n")
                size = int(bytes(self.buf[self.pos:e]).split(b";")[0], 16)
                self.pos = e + 2
                self._need(size + 2)       # the chunk and its CRLF (no trailers)
                parts.append(bytes(self.buf[self.pos:self.pos + size]))
                self.pos += size + 2
                if not size:
                    break
            body = b"".join(parts)
        else:
            raise RuntimeError("GET %s: a response without a length" % path)
        del self.buf[:self.pos]
        self.pos = 0
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        self.requests += 1
        if status in (200, 206):
            if status == 200:
                self.ok += 1
            else:
                self.partial += 1
            self.bytes += len(body)
        return status, hdrs.get("etag"), body

    def open_list(self, index, avoid=None):
        """URL-path of the open Change List (open_path), waiting (bounded)
        for an index that names one other than avoid."""
        for _ in range(3000):
            st, _, body = self.get(index)
            if st == 200:
                found = open_path(body)
                if found and found != avoid:
                    return found
            time.sleep(0.01)
        raise RuntimeError("no open Change List in %s" % index)


def open_path(index_body):
    """URL-path of the open Change List of a Change List index: the last
    <sitemap> without an until (None: there is none)."""
    found = None
    for m in SITEMAP_RX.finditer(index_body):
        if b"until=" not in m.group(1):
            loc = LOC_RX.search(m.group(1))
            if loc:
                found = urllib.parse.urlsplit(loc.group(1).decode()).path
    return found


def changelist_poller(port, index, expected, interval, ready, stop_at, out):
    """Poll the open Change List with If-None-Match; on a 200 parse the
    entries after the last one parsed (an open list only grows at its end)
    and note when each expected <loc> is first seen.  When the list has
    closed (an until in its head), parse it whole and go on with the next
    open one.  Sends ({loc: (first seen, its datetime)}, stats)."""
    child_signals()
    mono = time.monotonic_ns
    p = Poller(port)
    remaining = set(expected)
    seen = {}
    path = p.open_list(index)
    etag, off, lists = None, 0, 1
    ready.set()
    while remaining:
        st, et, body = p.get(path, etag)
        t = mono()
        if st == 304:
            if stop_at.value and t > stop_at.value:
                break
            if interval:
                time.sleep(interval)
            continue
        if st != 200:
            time.sleep(0.01)
            continue
        first = body.find(b"<url>")
        head = body if first < 0 else body[:first]
        closed = b"until=" in head
        if first >= 0:
            for m in ENTRY_RX.finditer(body, first if closed else max(off, first)):
                loc = m.group(1)
                if loc in remaining:
                    remaining.discard(loc)
                    seen[loc] = (t, m.group(2))
        if closed:
            path = p.open_list(index, avoid=path)
            etag, off = None, 0
            lists += 1
        else:
            etag = et
            e = body.rfind(b"</url>")
            off = e + 6 if e >= 0 else 0
        if stop_at.value and t > stop_at.value:
            break
    out.send((seen, dict(p.counters(), lists=lists)))
    out.close()


def static_poller(port, items, interval, ready, stop_at, out):
    """The observation floor: for each change in order, GET the file's URL
    until it answers 200 with the new length, and note when.  Sends
    ({index: first seen}, stats)."""
    child_signals()
    mono = time.monotonic_ns
    p = Poller(port)
    seen = {}
    i = 0
    ready.set()
    while i < len(items):
        path, length = items[i]
        st, _, body = p.get(path)
        t = mono()
        if st == 200 and len(body) == length:
            seen[i] = t
            i += 1
            continue
        if stop_at.value and t > stop_at.value:
            break
        if interval:
            time.sleep(interval)
    out.send((seen, dict(p.counters(), lists=0)))
    out.close()


# -- Resource List freshness and tail-following (figures 10, 11) ---------------

LENGTH_RX = re.compile(rb'length="(\d+)"')
URLSET_END = b"</urlset>\n"
ABSENT = -1             # the expected state of a deleted file: not listed


def listed_lengths(body, wanted):
    """{loc: length} of the locs of `wanted` that a Resource List document
    (a <urlset>) lists."""
    out = {}
    for m in LOC_RX.finditer(body):
        loc = m.group(1)
        if loc in wanted:
            end = body.find(b"</url>", m.end())
            ln = LENGTH_RX.search(body, m.end(), end)
            out[loc] = int(ln.group(1)) if ln else None
    return out


class ListFollower:
    """A destination that keeps the set's current Resource List: the index
    polled with If-None-Match; on a new index, every part URL it has not
    read is fetched whole, then every part it already holds is revalidated
    with If-None-Match (an unchanged part keeps its URL and ETag, so it
    answers 304).  Part URLs carry the generation that wrote the part, so a
    part read once never changes under its URL (a 200 on revalidation is
    counted as changed in place).  A set small enough for one document is
    one part (the index URL itself)."""

    def __init__(self, port, index, wanted):
        self.p = Poller(port)
        self.index = index
        self.wanted = wanted
        self.etag = None
        self.parts = {}         # part path -> (ETag, {loc: length}, bytes)
        self.generations = 0    # new indexes read
        self.whole = 0          # bytes of index + parts, summed over new indexes
        self.revalidated = 0
        self.changed_in_place = 0

    def poll(self):
        """None when the index did not change, else (time the new list was
        complete, {loc: length} of the wanted locs it lists)."""
        st, et, body = self.p.get(self.index, self.etag)
        if st == 304:
            return None
        if st != 200:
            raise RuntimeError("GET %s: %d" % (self.index, st))
        self.etag = et
        self.generations += 1
        if b"<sitemapindex" not in body[:2000]:
            self.parts = {}
            self.whole += len(body)
            return time.monotonic_ns(), listed_lengths(body, self.wanted)
        paths = [urllib.parse.urlsplit(m.group(1).decode()).path
                 for m in LOC_RX.finditer(body)]
        whole = len(body)
        fetched = set()
        for q in paths:
            if q not in self.parts:
                st, pe, pb = self.p.get(q)
                if st != 200:
                    raise RuntimeError("GET %s: %d" % (q, st))
                self.parts[q] = (pe, listed_lengths(pb, self.wanted), len(pb))
                fetched.add(q)
        t = time.monotonic_ns()     # every part of the new list is in hand
        for q in paths:
            pe, state, size = self.parts[q]
            if q in fetched or pe is None:
                continue
            st, ne, pb = self.p.get(q, pe)
            self.revalidated += 1
            if st == 200:
                self.changed_in_place += 1
                self.parts[q] = (ne, listed_lengths(pb, self.wanted), len(pb))
            elif st != 304:
                raise RuntimeError("GET %s with If-None-Match: %d" % (q, st))
        keep = set(paths)
        self.parts = {q: v for q, v in self.parts.items() if q in keep}
        state = {}
        for pe, part, size in self.parts.values():
            state.update(part)
            whole += size
        self.whole += whole
        return t, state


def resourcelist_poller(port, index, expected, interval, ready, stop_at, out):
    """Follow the Resource List (ListFollower) and note when each expected
    change is first shown: expected {loc: its new length, or ABSENT for a
    deleted file}.  The list as it was before the first change is read
    before `ready` and not counted.  Sends ({loc: first seen}, stats)."""
    child_signals()
    f = ListFollower(port, index, set(expected))
    if f.poll() is None:
        raise RuntimeError("GET %s: no list" % index)
    before, gens, whole = f.p.counters(), f.generations, f.whole
    remaining = set(expected)
    seen = {}
    ready.set()
    while remaining:
        r = f.poll()
        if r is None:
            if stop_at.value and time.monotonic_ns() > stop_at.value:
                break
            if interval:
                time.sleep(interval)
            continue
        t, state = r
        for loc in list(remaining):
            if state.get(loc, ABSENT) == expected[loc]:
                remaining.discard(loc)
                seen[loc] = t
        if stop_at.value and t > stop_at.value:
            break
    stats = {k: v - before[k] for k, v in f.p.counters().items()}
    stats.update(lists=f.generations - gens, whole=f.whole - whole, parts=len(f.parts),
                 revalidated=f.revalidated, changed_in_place=f.changed_in_place)
    out.send((seen, stats))
    out.close()


def tail_poller(port, index, expected, interval, ready, stop_at, out):
    """A destination that follows the open Change List reading only its
    tail: it reads the list once, then GETs it with If-None-Match and
    Range: bytes=<its length minus the closing tag>- with If-Range: <the
    ETag it holds>.  A 206 is the new entries and the closing tag (the
    closing tag alone: nothing new, when the server answers If-Range before
    If-None-Match as httpd 2.4 does for static files; the module answers
    such a poll 304, RFC 9110's order); a 200 is a new document (the list closed: it is
    read whole, then the next open list is found through the index and
    read whole).  Notes when each expected <loc> is first seen and the bytes
    of the entries the 206s carried.  Sends ({loc: first seen}, stats)."""
    child_signals()
    mono = time.monotonic_ns
    p = Poller(port)
    remaining = set(expected)
    seen = {}

    def note(body, t):
        for m in LOC_RX.finditer(body):
            if m.group(1) in remaining:
                remaining.discard(m.group(1))
                seen[m.group(1)] = t

    def read_whole(path):
        st, et, body = p.get(path)
        if st != 200 or not body.endswith(URLSET_END):
            raise RuntimeError("GET %s: %d" % (path, st))
        note(body, mono())
        return et, len(body)

    path = p.open_list(index)
    etag, length = read_whole(path)
    lists, entry_bytes, entries, whole_reads, empty, notmod = 1, 0, 0, 0, 0, 0
    ready.set()
    while remaining:
        off = length - len(URLSET_END)
        st, et, body = p.get(path, etag, {"Range": "bytes=%d-" % off, "If-Range": etag})
        t = mono()
        if st == 304 or (st == 206 and body == URLSET_END):
            empty += 1          # nothing new
            notmod += st == 304
            if stop_at.value and t > stop_at.value:
                break
            if interval:
                time.sleep(interval)
            continue
        if st == 206:
            if not body.endswith(URLSET_END):
                raise RuntimeError("GET %s bytes=%d-: a tail without the closing tag" % (path, off))
            new = body[:-len(URLSET_END)]
            entry_bytes += len(new)
            entries += new.count(b"<url>")
            note(new, t)
            etag, length = et, off + len(body)
        elif st == 200:
            whole_reads += 1
            note(body, t)
            first = body.find(b"<url>")
            if b"until=" in (body if first < 0 else body[:first]):
                path = p.open_list(index, avoid=path)
                etag, length = read_whole(path)
                lists += 1
            else:
                etag, length = et, len(body)
        else:
            raise RuntimeError("GET %s bytes=%d-: %d" % (path, off, st))
        if stop_at.value and t > stop_at.value:
            break
    out.send((seen, dict(p.counters(), lists=lists, entry_bytes=entry_bytes, entries=entries,
                         whole_reads=whole_reads, empty=empty, notmod=notmod)))
    out.close()


def w3c_ns(dt):
    """ns since the epoch of a W3C datetime as the module writes it
    (UTC, Z, up to 9 decimals)."""
    d = dt.decode()
    base, _, frac = d.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1000000000 + int((frac + "000000000")[:9])


# -- the watcher's memory over many journaled changes (figure 9) ---------------

RSS_WINDOW = 1000       # changes made but not yet journaled, at most: a few
                        # inotify events each, far below max_queued_events
RSS_RESCAN = 10         # ResourceSyncRescanInterval of figure 9: ticks (lists
                        # closed on time, retention, Resource List snapshots)
                        # run during the measurement too
STATUS_PATH = "/resourcesync-status"
HEAD_RX = re.compile(rb"newest-sequence=(\d+)")
WPID_RX = re.compile(rb"watcher-pid: (\d+)")


def proc_mem(pid):
    """{field: kB} of VmRSS, VmHWM, RssAnon, RssFile, RssShmem of a process
    ({} when it is gone)."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def watcher_status(poller):
    """(watcher pid, sequence of the newest journaled change) from the
    status page: the sequence counts every change the watcher committed and
    put into the ring."""
    st, _, body = poller.get(STATUS_PATH + "?text")
    h, w = HEAD_RX.search(body or b""), WPID_RX.search(body or b"")
    if st != 200 or not h:
        raise RuntimeError("GET %s: %d, no newest-sequence" % (STATUS_PATH, st))
    return (int(w.group(1)) if w else None), int(h.group(1))


class ChangePool:
    """The writer of figure 9: changes to a pool of `size` files (directories
    of 100), slot i % size at change i.  On each pass over the pool a file is
    deleted in one slot of 8 (and made again on the next pass), the others are
    rewritten with a length other than the one they had.  Each file is touched
    once per pass: with fewer than `size` changes outstanding, no two changes
    to one file are pending at once, so none is coalesced with another.  With
    unique, every version's bytes begin with the change's number: no two
    versions have the same content (digest)."""

    def __init__(self, top, size, unique=False):
        self.size = size
        self.unique = unique
        self.paths = []
        for s in range(size):
            d = os.path.join(top, "d%03d" % (s // 100))
            if s % 100 == 0:
                os.makedirs(d)
                os.chmod(d, 0o755)
            self.paths.append(os.path.join(d, "f%05d" % s))
        for path in self.paths:
            with open(path, "wb") as fh:
                fh.write(NEW_BODY)
            os.chmod(path, 0o644)
        self.exists = [True] * size
        self.ops = 0
        self.kinds = {"created": 0, "updated": 0, "deleted": 0}

    def step(self):
        s, k = self.ops % self.size, self.ops // self.size
        path = self.paths[s]
        if not self.exists[s]:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, self.body(NEW_BODY))
            os.close(fd)
            self.exists[s] = True
            self.kinds["created"] += 1
        elif (k + s) % 8 == 7:
            os.unlink(path)
            self.exists[s] = False
            self.kinds["deleted"] += 1
        else:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, self.body(b"u" * (101 + k % 61)))   # never the length of the
                                                             # pass before
            os.close(fd)
            self.kinds["updated"] += 1
        self.ops += 1

    def body(self, b):
        """b, or (unique) b with the change's number at its start."""
        if not self.unique:
            return b
        n = b"%d " % self.ops
        return n + b[len(n):]


def journal_changes(srv, pool, poller, head0, done, upto, window, fig, ops0=0, exact=False):
    """Make pool's changes, at most `window` ahead of what the watcher has
    journaled, until it has journaled `upto` of them since the status
    page's newest-sequence was head0 and pool.ops was ops0 (done of them
    so far); returns how many it has journaled then (with exact, no more
    than upto are made; otherwise the writer may be up to `window` ahead)."""
    last = time.monotonic()
    while done < upto:
        made = pool.ops - ops0
        room = window - (made - done)
        if exact:
            room = min(room, upto - made)
        if room > 0:
            for _ in range(min(room, 200)):
                pool.step()
        else:
            time.sleep(0.0005)
        _, head = watcher_status(poller)
        now = time.monotonic()
        if head - head0 > done:
            done, last = head - head0, now
        elif now - last > 120:
            raise RuntimeError("figure %s: nothing journaled for 120 s after %d changes "
                               "(%d made); see %s" % (fig, done, pool.ops, srv.error_log))
    return done


def journal_counts(db):
    """(journal records, closed Change Lists) in the state store, read-only."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        recs = con.execute("SELECT count(*) FROM journal WHERE setname = ?", (SET,)).fetchone()[0]
        lists = con.execute("SELECT count(*) FROM changelists WHERE setname = ?",
                            (SET,)).fetchone()[0]
        return recs, lists
    finally:
        con.close()


def proc_cpu(pid):
    """CPU time of a process and its threads in clock ticks (utime + stime),
    or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return None
    fields = st[st.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def wait_idle(pid, quiet=2.0, timeout=300):
    """Wait until the process has used less than 5% of a CPU for `quiet`
    seconds (at most timeout s); returns the seconds waited."""
    hz = os.sysconf("SC_CLK_TCK")
    t0 = time.monotonic()
    window = []
    while time.monotonic() - t0 < timeout:
        cpu = proc_cpu(pid)
        if cpu is None:
            raise RuntimeError("process %d is gone" % pid)
        now = time.monotonic()
        window = [(t, c) for t, c in window if now - t <= quiet] + [(now, cpu)]
        if now - t0 >= quiet and now - window[0][0] >= quiet * 0.9 \
                and cpu - window[0][1] <= 0.05 * hz * quiet:
            return now - t0
        time.sleep(0.1)
    raise RuntimeError("process %d still busy after %d s" % (pid, timeout))


def slope(points):
    """Least-squares slope of [(x, y)] (0 with fewer than two distinct x)."""
    if len(points) < 2:
        return 0.0
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def percentile(values, q):
    """Nearest-rank percentile of a non-empty list."""
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(-(-q * len(v) // 100)) - 1))
    return v[k]


def fig_key(r):
    """Sort key of a result row: by figure, 2 before 10 (D2 before D10), rows
    of one figure in the order measured (sorted() is stable)."""
    m = re.fullmatch(r"(\D*)(\d*)", r["fig"])
    return (m.group(1), int(m.group(2) or 0)) if m else (r["fig"], 0)


def fmt_num(v, unit):
    if v is None:
        return "-"
    if unit == "s":
        return "%.3f s" % v
    if unit == "req/s":
        return "%.1f req/s" % v
    if unit == "kB":
        return "%d kB" % v
    if unit == "ms":
        return "%.3f ms" % v
    if unit == "/s":
        return "%.0f changes/s" % v
    if unit == "B":
        return "%.0f B" % v
    return "%g %s" % (v, unit)


class Bench:
    def report(self, title, stem, facts, started, elapsed):
        """Print the table; write the Markdown to the work dir (and --md)."""
        a = self.args
        print()
        print("%s: %d files (%s; %s CPUs, %s)"
              % (title, self.n, facts["date"], facts["nproc"], facts["cpu"]))
        print(self.text_table())
        md = self.markdown(facts, started, elapsed)
        path = os.path.join(self.work, "%s-%d.md" % (stem, self.n))
        with open(path, "w") as f:
            f.write(md)
        print("\nMarkdown: %s" % path)
        if a.md:
            with open(a.md, "w") as f:
                f.write(md)
            print("Markdown: %s" % a.md)

    def __init__(self, args):
        self.args = args
        self.n = args.files
        self.work = os.environ.get("RS_BENCH_DIR") or "/tmp/rs-bench-%d" % os.getuid()
        self.results = []
        self.commands = []      # (what, command line)
        self.notes = []
        self.servers = []
        self.env = dict(os.environ, LC_ALL="C", TZ="UTC")
        self.tree_top = os.path.join(self.work, "tree-%d" % self.n)
        self.www = os.path.join(self.tree_top, "www")
        self.data = os.path.join(self.www, "data")
        self.scratch = os.path.join(self.work, "scratch-%d" % self.n)
        self.live_tops = []     # DocumentRoots of figures 6, 7, 8
        self.procs = []         # writer and poller processes

    # -- bookkeeping -------------------------------------------------------
    def note_cmd(self, what, cmd):
        if (what, cmd) not in self.commands:
            self.commands.append((what, cmd))

    def result(self, fig, name, ours, base, unit, target_key, note="", ratio=None):
        """Record a figure.  ours and base are a value or a list of samples
        (the median is used; the spread goes into the notes)."""
        spread = []
        if isinstance(ours, list):
            if len(ours) > 1:
                spread.append("ours %s..%s" % (fmt_num(min(ours), unit), fmt_num(max(ours), unit)))
            ours = statistics.median(ours)
        if isinstance(base, list):
            if len(base) > 1:
                spread.append("baseline %s..%s" % (fmt_num(min(base), unit), fmt_num(max(base), unit)))
            base = statistics.median(base)
        if spread:
            note = (note + "; " if note else "") + "range " + ", ".join(spread)
        if ratio is None and ours is not None and base:
            ratio = ours / base
        target, ok = "-", None
        if TARGETS[target_key]:
            op, tv = TARGETS[target_key][:2]
            if len(TARGETS[target_key]) > 2:     # on the value itself
                target = "%s %g %s" % (op, tv, TARGETS[target_key][2])
                v = ours
            else:
                target = "%s %.2g" % (op, tv)
                v = ratio
            if v is not None:
                ok = v <= tv if op == "<=" else v >= tv
        self.results.append(dict(fig=fig, name=name, ours=ours, base=base, unit=unit,
                                 ratio=ratio, target=target, ok=ok, note=note))
        log("figure %s: %s: ours %s, baseline %s, ratio %s (target %s)"
            % (fig, name, fmt_num(ours, unit), fmt_num(base, unit),
               "-" if ratio is None else "%.2f" % ratio, target))
        return ours, base

    def timed(self, what, cmd, timeout):
        """Run a shell command (bash, pipefail), return its wall time in s."""
        self.note_cmd(what, cmd)
        t0 = time.perf_counter()
        r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s\n%s" % (what, r.returncode, cmd,
                                                           r.stderr.decode(errors="replace")))
        return dt

    def compare(self, ours_what, ours_cmd, base_what, base_cmd, prep=None):
        """Interleaved repetitions; returns (samples of ours, of the baseline)."""
        ours, base = [], []
        timeout = self.op_timeout
        for i in range(self.args.reps):
            order = [0, 1] if i % 2 == 0 else [1, 0]
            for which in order:
                if which == 0:
                    if prep:
                        prep()
                    ours.append(self.timed(ours_what, ours_cmd, timeout))
                else:
                    base.append(self.timed(base_what, base_cmd, timeout))
        return ours, base

    @property
    def op_timeout(self):
        # generous, but bounded: 10 min + 2 ms per file
        return 600 + self.n * 0.002

    # -- setup ---------------------------------------------------------------
    def machine(self):
        cpu = "?"
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name"):
                        cpu = line.split(":", 1)[1].strip()
                        break
        except OSError:
            pass
        mem = "?"
        try:
            with open("/proc/meminfo") as f:
                mem = "%.1f GiB" % (int(f.readline().split()[1]) / 1048576)
        except OSError:
            pass
        httpd = subprocess.run([HTTPD, "-v"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT).stdout.decode().splitlines()
        rev = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--", "src",
                                "tools", "mod_resourcesync.c"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL).stdout.decode().strip()
        return {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "nproc": str(os.cpu_count()),
            "cpu": cpu,
            "kernel": platform.release(),
            "memory": mem,
            "httpd": httpd[0].split(":", 1)[1].strip() if httpd else "?",
            "commit": (rev or "?") + (" (modified)" if dirty else ""),
            "load": "%.2f %.2f %.2f" % os.getloadavg(),
        }

    def make_tree(self):
        os.makedirs(self.work, exist_ok=True)
        os.chmod(self.work, 0o755)
        os.makedirs(self.www, exist_ok=True)
        os.chmod(self.tree_top, 0o755)
        os.chmod(self.www, 0o755)
        log("tree of %d files in %s" % (self.n, self.data))
        cmd = "umask 022; %s %d %s" % (os.path.join(TOP, "bench", "make-tree"), self.n, self.data)
        self.note_cmd("make the tree", cmd)
        subprocess.run(["sh", "-c", cmd], check=True, timeout=self.op_timeout + 3600)
        if os.path.isdir(self.scratch):
            shutil.rmtree(self.scratch)
        os.makedirs(self.scratch)
        log("warming the page cache")
        self.timed("warm the cache", "find %s -type f -print0 | xargs -0 cat > /dev/null" % self.data,
                   self.op_timeout)
        self.timed("warm the cache", "find %s -type f -printf '%%s %%T@ %%p\\n' > /dev/null" % self.data,
                   self.op_timeout)

    # -- figures -------------------------------------------------------------
    def find_cmd(self):
        return "find %s -type f -printf '%%s %%T@ %%p\\n' > /dev/null" % self.data

    def fig1_engine(self):
        db = os.path.join(self.scratch, "scan-none.db")
        prep = lambda: self.rm_db(db)
        ours, base = self.compare(
            "1: engine scan, no hashes", "%s scan %s %s %s" % (RS_TOOL, db, SET, self.data),
            "1: baseline", self.find_cmd(), prep)
        _, self.find_time = self.result("1", "initial scan, no hashes: engine (rs-tool scan)",
                                        ours, base, "s", "1e",
                                        "baseline: find -printf '%s %T@ %p\\n'")
        self.none_db = db

    def fig2_engine(self):
        self.hash_base = {}
        for algo, tool, label in (("md5", "md5sum", "md5"), ("sha-256", "sha256sum", "sha-256")):
            db = os.path.join(self.scratch, "scan-%s.db" % algo)
            ours, base = self.compare(
                "2: engine scan --hash " + algo,
                "%s scan %s %s %s --hash %s" % (RS_TOOL, db, SET, self.data, algo),
                "2: baseline " + tool,
                "find %s -type f -print0 | xargs -0 %s > /dev/null" % (self.data, tool),
                lambda db=db: self.rm_db(db))
            _, self.hash_base[algo] = self.result(
                "2", "initial scan, %s: engine" % label, ours, base, "s",
                "2s" if algo == "sha-256" else "2",
                "baseline: find -print0 | xargs -0 %s" % tool)
            self.rm_db(db)
        # both in one pass vs the two tools one after the other
        db = os.path.join(self.scratch, "scan-both.db")
        ours = []
        for _ in range(self.args.reps):
            self.rm_db(db)
            ours.append(self.timed("2: engine scan --hash md5,sha-256",
                                   "%s scan %s %s %s --hash md5,sha-256"
                                   % (RS_TOOL, db, SET, self.data), self.op_timeout))
        both = self.hash_base["md5"] + self.hash_base["sha-256"]
        self.hash_base["both"] = both
        self.result("2", "initial scan, md5 + sha-256: engine", ours, both,
                    "s", "2", "baseline: md5sum time + sha256sum time (two passes)")
        self.rm_db(db)

    def fig3_engine(self):
        out = os.path.join(self.scratch, "list-out")
        base_out = os.path.join(self.scratch, "find-list.xml")
        url = "http://127.0.0.1/data/"
        fmt = ("<url><loc>%s%%P</loc><lastmod>%%TY-%%Tm-%%TdT%%TH:%%TM:%%TSZ</lastmod>"
               "<rs:md length=\"%%s\"/></url>\\n" % url)

        def prep():
            if os.path.isdir(out):
                shutil.rmtree(out)
            os.makedirs(out)
        ours, base = self.compare(
            "3: engine list", "%s list %s %s %s %s --max %d"
            % (RS_TOOL, self.none_db, SET, out, url, MAX_ENTRIES),
            "3: baseline", "find %s -type f -printf '%s' > %s" % (self.data, fmt, base_out), prep)
        size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
        nparts = len([f for f in os.listdir(out) if f.startswith("part-")])
        _, self.find_list_time = self.result(
            "3", "Resource List from the inventory: engine (rs-tool list)", ours, base,
            "s", "3", "%s, %.1f MB; find writes one %.1f MB file"
            % ("%d parts + index" % nparts if nparts else "one urlset", size / 1e6,
               os.path.getsize(base_out) / 1e6))
        shutil.rmtree(out)
        os.unlink(base_out)

    def rm_db(self, db):
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(db + suffix)
            except FileNotFoundError:
                pass

    def scan_timeout(self):
        return 120 + self.n * 0.002

    def start_server(self, name, setdir, hashes):
        srv = Server(self, name, self.www, setdir, hashes, self.args.conns)
        self.servers.append(srv)
        srv.start()
        srv.first_lists(self.scan_timeout())
        log("%s: first scan %d files in %.3f s, list of %d entries in %d parts"
            % (name, srv.scan_files, srv.scan_time, srv.entries, srv.parts))
        return srv

    def stop_server(self, srv):
        srv.stop()
        self.servers.remove(srv)
        if not self.args.keep:
            shutil.rmtree(srv.dir, ignore_errors=True)

    def fig1_module(self):
        times, pubs = [], []
        for i in range(self.args.reps):
            srv = self.start_server("none", self.data, "none")
            times.append(srv.scan_time)
            pubs.append(srv.publish_time)
            self.stop_server(srv)
        self.result("1", "initial scan, no hashes: module (first scan, from the error log)",
                    times, self.find_time, "s", "1m",
                    "includes the httpd access check of every file")
        if hasattr(self, "find_list_time"):
            self.result("3", "Resource List after the first scan: module (log timestamps)",
                        pubs, self.find_list_time, "s", "3",
                        "scan line to published line; includes type attributes")

    def fig45_module(self):
        small_dir = os.path.join(self.data, "a0")
        # 5, small set: a tenth of the tree, in a server of its own
        small = self.start_server("small", small_dir, "md5 sha-256")
        idle_small = max(vm_hwm(p) or 0 for p in small.workers())
        # EnableSendfile On first (nothing is mapped), then httpd's default
        # (Off: the core output filter mmaps the file in chunks of up to
        # 4 MB, which count in the child's RSS); VmHWM only grows
        docs_s, entries_s, bytes_s, _ = fetch_all(small.port, "/resourcesync/%s/resourcelist.xml"
                                                  % SET, "?sendfile")
        rss_small_sf = max(vm_hwm(p) or 0 for p in small.workers())
        fetch_all(small.port, "/resourcesync/%s/resourcelist.xml" % SET)
        rss_small = max(vm_hwm(p) or 0 for p in small.workers())
        w_small = vm_hwm(small.watcher()) if small.watcher() else None
        self.stop_server(small)

        # 5 and 4, the whole tree with md5 and sha-256 (about 15 MB per part);
        # the first scan is repeated (fresh state each time) for figure 2
        scans = []
        reps = self.args.reps if "2" in self.figs else 1
        for i in range(reps):
            big = self.start_server("hashed", self.data, "md5 sha-256")
            scans.append(big.scan_time)
            if i < reps - 1:
                self.stop_server(big)
        if "2" in self.figs and hasattr(self, "hash_base"):
            self.result("2", "initial scan, md5 + sha-256: module (first scan)", scans,
                        self.hash_base["both"], "s", "2",
                        "baseline: md5sum time + sha256sum time")
        idle_big = max(vm_hwm(p) or 0 for p in big.workers())
        docs_b, entries_b, bytes_b, parts = fetch_all(big.port, "/resourcesync/%s/resourcelist.xml"
                                                      % SET, "?sendfile")
        rss_big_sf = max(vm_hwm(p) or 0 for p in big.workers())
        fetch_all(big.port, "/resourcesync/%s/resourcelist.xml" % SET)
        rss_big = max(vm_hwm(p) or 0 for p in big.workers())
        w_big = vm_hwm(big.watcher()) if big.watcher() else None
        if "5" in self.figs:
            self.result("5", "httpd child peak RSS after fetching every part, EnableSendfile On: "
                        "%d vs %d entries" % (entries_b, entries_s), rss_big_sf, rss_small_sf,
                        "kB", "5",
                        "%d vs %d documents, %.1f vs %.1f MB over one connection; "
                        "idle child %d / %d kB"
                        % (docs_b, docs_s, bytes_b / 1e6, bytes_s / 1e6, idle_big, idle_small))
            self.result("5", "httpd child peak RSS after fetching every part again, EnableSendfile "
                        "Off (httpd default): %d vs %d entries" % (entries_b, entries_s),
                        rss_big, rss_small, "kB", "5",
                        "includes the file pages mmapped by the core output filter (up to 4 MB "
                        "per chunk), shared page cache rather than allocated memory")
            if w_big and w_small:
                self.result("5", "watcher peak RSS after scan + snapshot: %d vs %d files"
                            % (big.scan_files, small.scan_files), w_big, w_small, "kB", "i",
                            "rs-watcher process, hashes md5 sha-256")
        if "4" in self.figs:
            self.fig4(big, parts)
        self.stop_server(big)

    def fig4(self, srv, parts):
        path = parts[0] if parts else "/resourcesync/%s/resourcelist.xml" % SET
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        st, n, body = http_get(conn, path)
        conn.close()
        if st != 200:
            raise RuntimeError("GET %s: %d" % (path, st))
        entries = body.count(b"</url>")
        d = os.path.join(self.www, "static")
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        os.chmod(d, 0o755)
        # (a) a copy of the bytes, written with one write()
        f = os.path.join(d, "part.xml")
        with open(f, "wb") as fh:
            fh.write(body)
        os.chmod(f, 0o644)
        statics = ["/static/part.xml"]
        # (b) the module's own snapshot file, hard-linked into the
        # DocumentRoot: the same inode and the same page cache, so only the
        # per-request work differs
        snap = None
        top = os.path.join(srv.dir, "state", "snapshots", SET)
        for root, _, files in os.walk(top):
            for name in files:
                fp = os.path.join(root, name)
                if os.path.getsize(fp) == n:
                    with open(fp, "rb") as fh:
                        if fh.read() == body:
                            snap = fp
        if snap:
            try:
                os.link(snap, os.path.join(d, "link.xml"))
                statics.append("/static/link.xml")
            except OSError as e:
                self.notes.append("figure 4: cannot hard-link %s: %s" % (snap, e))
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        for static in statics:
            st, n2, _ = http_get(conn, static, lambda c: None)
            if st != 200 or n2 != n:
                raise RuntimeError("static copy %s: %d, %d bytes (want %d)" % (static, st, n2, n))
        conn.close()
        # The same server settings on both sides: httpd's defaults
        # (EnableSendfile Off), and EnableSendfile On (the <If> on
        # "?sendfile" in the configuration).
        urls = [srv.base + path, srv.base + statics[0],
                srv.base + path + "?sendfile", srv.base + statics[0] + "?sendfile"]
        if len(statics) > 1:
            urls.append(srv.base + statics[1])
        k_urls = len(urls)
        rates = [[] for _ in urls]
        errors = set()
        wrk = "wrk -t1 -c%d -d%ds" % (self.args.conns, self.args.duration)
        for i in range(self.args.wrk_reps):
            for k in [(i + j) % k_urls for j in range(k_urls)]:     # rotate the order
                cmd = "%s %s" % (wrk, urls[k])
                self.note_cmd("4: wrk", cmd)
                r = subprocess.run(cmd.split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=self.args.duration + 60)
                rate, count, errs = parse_wrk(r.stdout.decode(errors="replace"))
                rates[k].append(rate)
                errors.update(errs)
        what = "%d-entry %s (%.1f MB)" % (entries, "part" if parts else "resourcelist.xml", n / 1e6)
        extra = "; wrk: " + ", ".join(sorted(errors)) if errors else ""
        self.result("4", "requests/s, unchanged %s vs static copy, EnableSendfile Off on both "
                    "(httpd default)" % what, rates[0], rates[1], "req/s", "4",
                    "both sides mmap the file; the copy was written with one write()%s" % extra)
        self.result("4", "requests/s, unchanged %s vs static copy, EnableSendfile On on both"
                    % what, rates[2], rates[3], "req/s", "4", "both sides use sendfile")
        if len(statics) > 1:
            self.result("4", "requests/s, unchanged %s vs the same snapshot file hard-linked "
                        "as a static file, EnableSendfile Off on both" % what,
                        rates[0], rates[4], "req/s", "4",
                        "same inode and page cache on both sides; only the per-request "
                        "work differs")
        shutil.rmtree(d, ignore_errors=True)

    # -- live change tracking (figures 6, 7, 8) ------------------------------
    def live_setup(self, fig):
        """A DocumentRoot of its own for a live figure: www/set (the set) and
        www/plain (files no set covers)."""
        top = os.path.join(self.work, "live-" + fig)
        shutil.rmtree(top, ignore_errors=True)
        www = os.path.join(top, "www")
        for d in (self.work, top, www, os.path.join(www, "set"), os.path.join(www, "plain")):
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o755)
        self.live_tops.append(top)
        return www

    def live_plan(self, www, side, name, n, rewrites):
        """n changes in a new directory www/side/name: every other one the
        rewrite of a file made now (when rewrites), the others new files."""
        d = os.path.join(www, side, name)
        os.makedirs(d)
        os.chmod(d, 0o755)
        changes = []
        for i in range(n):
            if rewrites and i % 2:
                f = os.path.join(d, "u%06d" % i)
                with open(f, "wb") as fh:
                    fh.write(NEW_BODY)
                os.chmod(f, 0o644)
                changes.append((f, "u"))
            else:
                changes.append((os.path.join(d, "c%06d" % i), "c"))
        return changes

    def start_live(self, name, www, set_extra=""):
        srv = Server(self, name, www, os.path.join(www, "set"), "md5", max(2, self.args.conns),
                     self.args.cl_max, set_extra=set_extra)
        self.servers.append(srv)
        srv.start()
        srv.wait_log(r"set %s: published Resource List" % SET, 60)
        srv.index = "/resourcesync/%s/changelist.xml" % SET
        return srv

    def live_run(self, target, args, changes, rate, grace):
        """Start the poller (target), wait until it is polling, run the writer,
        then give the poller `grace` seconds after the last close.  Returns
        (writer start, [close times], seen, poller stats)."""
        start, closes, walls, res = self.live_run_many([(target, args)], changes, rate, grace)
        seen, stats = res[0]
        stats["walls"] = walls
        return start, closes, seen, stats

    def live_run_many(self, pollers, changes, rate, grace, ready_timeout=60):
        """live_run with several pollers [(target, args)] following the same
        changes at once.  Returns (writer start, [close times], [wall clock
        at each close], [(seen, stats) of each poller])."""
        ctx = multiprocessing.get_context("fork")
        stop_at = ctx.Value("q", 0)
        running = []
        for target, args in pollers:
            ready = ctx.Event()
            p_in, p_out = ctx.Pipe(False)
            poller = ctx.Process(target=target, args=args + (ready, stop_at, p_out))
            self.procs.append(poller)
            poller.start()
            p_out.close()       # a poller that dies ends its pipe: EOFError below
            running.append((poller, ready, p_in))
        for poller, ready, _ in running:
            deadline = time.time() + ready_timeout
            while not ready.wait(1):
                if not poller.is_alive() or time.time() > deadline:
                    raise RuntimeError("the poller did not start")
        w_in, w_out = ctx.Pipe(False)
        writer = ctx.Process(target=writer_proc, args=(changes, rate, w_out))
        self.procs.append(writer)
        writer.start()
        if not w_in.poll((len(changes) / rate if rate else 0) + 300):
            raise RuntimeError("the writer did not finish")
        start, closes, walls = w_in.recv()
        writer.join(10)
        stop_at.value = time.monotonic_ns() + int(grace * 1e9)
        results = []
        for poller, _, p_in in running:
            try:
                if not p_in.poll(grace + 120):
                    raise RuntimeError("the poller did not finish")
                results.append(p_in.recv())
            except EOFError:
                raise RuntimeError("a poller failed (exit status %s)" % poller.exitcode)
            poller.join(10)
        return start, closes, walls, results

    def live_write_only(self, changes):
        """The writer alone, as fast as possible: (start, [close times])."""
        ctx = multiprocessing.get_context("fork")
        w_in, w_out = ctx.Pipe(False)
        writer = ctx.Process(target=writer_proc, args=(changes, 0, w_out))
        self.procs.append(writer)
        writer.start()
        if not w_in.poll(600):
            raise RuntimeError("the writer did not finish")
        start, closes, _ = w_in.recv()
        writer.join(10)
        return start, closes

    def loc_of(self, srv, www, path):
        return (srv.base + "/" + os.path.relpath(path, www)).encode()

    def live_changelist(self, srv, www, changes, rate, grace=10):
        """Writer + Change List poller: latencies in ms (None: never seen)."""
        locs = [self.loc_of(srv, www, p) for p, _ in changes]
        start, closes, seen, stats = self.live_run(
            changelist_poller, (srv.port, srv.index, locs, self.args.poll_interval / 1000.0),
            changes, rate, grace)
        lat = [(seen[l][0] - c) / 1e6 if l in seen else None for l, c in zip(locs, closes)]
        # The entry's datetime is when the watcher journaled the change:
        # close -> datetime is the watcher's part, the rest is publishing
        # and polling.
        obs = []
        for l, w in zip(locs, stats.pop("walls")):
            if l in seen:
                obs.append((w3c_ns(seen[l][1]) - w) / 1e6)
        s = self.live_summary(start, closes, lat, stats)
        s["obs_p50"] = percentile(obs, 50) if obs else None
        s["obs_p99"] = percentile(obs, 99) if obs else None
        return s

    def live_static(self, srv, www, changes, rate, grace=10):
        """Writer + static poller (the floor): latencies in ms."""
        items = [("/" + os.path.relpath(p, www), len(NEW_BODY if k == "c" else REWRITE_BODY))
                 for p, k in changes]
        start, closes, seen, stats = self.live_run(
            static_poller, (srv.port, items, self.args.poll_interval / 1000.0),
            changes, rate, grace)
        stats.pop("walls")
        lat = [(seen[i] - c) / 1e6 if i in seen else None for i, c in enumerate(closes)]
        return self.live_summary(start, closes, lat, stats)

    def live_summary(self, start, closes, lat, stats):
        got = [x for x in lat if x is not None]
        s = dict(stats)
        s["n"] = len(closes)
        s["missing"] = len(lat) - len(got)
        s["writer_rate"] = len(closes) / ((closes[-1] - start) / 1e9) if closes else 0
        if got:
            s["p50"] = percentile(got, 50)
            s["p99"] = percentile(got, 99)
            s["max"] = max(got)
            s["min"] = min(got)
            last = max(c + x * 1e6 for c, x in zip(closes, lat) if x is not None)
            s["drain"] = (last - start) / 1e9
            s["listed_rate"] = len(got) / s["drain"]
            s["drain_close"] = (last - closes[0]) / 1e9     # from the first close
        else:
            s.update(p50=None, p99=None, max=None, min=None, drain=None, listed_rate=0,
                     drain_close=None)
        return s

    def live_desc(self, s):
        out = ("%d changes, writer %.0f/s, latency min %.2f / max %.2f ms, %d never seen, "
               "%d requests (%d answered 200, %.1f MB)"
               % (s["n"], s["writer_rate"], s["min"] or 0, s["max"] or 0, s["missing"],
                  s["requests"], s["ok"], s["bytes"] / 1e6))
        if s.get("obs_p50") is not None:
            out += ("; close to the entry's datetime (the watcher's part) p50 %.2f, "
                    "p99 %.2f ms" % (s["obs_p50"], s["obs_p99"]))
        return out

    def fig6(self):
        a = self.args
        www = self.live_setup("6")
        rates = [100, 1000]
        plans = {}
        for rate in rates:
            n = int(rate * a.live_duration)
            for side in ("set", "plain"):
                plans[rate, side] = self.live_plan(www, side, "r%d" % rate, n, True)
        srv = self.start_live("live6", www)
        log("figure 6: open Change List at %s" % srv.index)
        for rate in rates:
            log("figure 6: %d changes/s for %g s" % (rate, a.live_duration))
            ours = self.live_changelist(srv, www, plans[rate, "set"], rate)
            base = self.live_static(srv, www, plans[rate, "plain"], rate)
            for q in ("p50", "p99"):
                key = "6" if (q == "p99" and rate == 1000) else "i"
                self.result("6", "latency from close to the entry in the open Change List, "
                            "%s, %d changes/s" % (q, rate), ours[q], base[q], "ms", key,
                            "ours: %s; %d Change Lists read. Baseline (the same writer, the "
                            "file outside the set, polled as a static file until it answers "
                            "200 with its new length): %s"
                            % (self.live_desc(ours), ours["lists"], self.live_desc(base))
                            if q == "p99" else "")
        self.live_log_notes(srv, "6")
        self.stop_server(srv)

    def fig7(self):
        a = self.args
        www = self.live_setup("7")
        # Baseline: the writer alone in a directory no set covers, as fast as
        # it can: once before the steps, the other repetitions after the burst.
        w_rates = []

        def write_alone():
            plain = self.live_plan(www, "plain", "burst%d" % len(w_rates), a.burst, False)
            start, closes = self.live_write_only(plain)
            w_rates.append(len(closes) / ((closes[-1] - start) / 1e9))
            log("figure 7: the writer alone: %d files at %.0f/s" % (len(closes), w_rates[-1]))
            shutil.rmtree(os.path.dirname(plain[0][0]), ignore_errors=True)
        write_alone()
        # Offered rates up to twice what the writer alone reached (a step
        # above what it can write shows the writer, not the watcher).
        steps = [r for r in a.steps if r <= 2 * w_rates[0]] or [min(a.steps)]
        plans = [(r, self.live_plan(www, "set", "k%d" % r, int(r * a.step_duration), False))
                 for r in steps]
        burst = self.live_plan(www, "set", "burst", a.burst, False)
        srv = self.start_live("live7", www)
        sustained = None
        for r, changes in plans:
            log("figure 7: offered %d changes/s for %g s" % (r, a.step_duration))
            s = self.live_changelist(srv, www, changes, r)
            ok = (s["missing"] == 0 and s["p99"] is not None
                  and s["p99"] <= TARGETS["6"][1] and s["listed_rate"] >= 0.9 * r)
            if ok:
                sustained = (r, s)
            self.result("7", "offered %d changes/s: listed rate (p99 %s)"
                        % (r, fmt_num(s["p99"], "ms")), s["listed_rate"], float(r),
                        "/s", "i", "baseline: the offered rate; " + self.live_desc(s)
                        + ("; p50 %s" % fmt_num(s["p50"], "ms")))
            if s["missing"] or (s["p99"] or 0) > 10 * TARGETS["6"][1]:
                break       # saturated: higher steps say nothing more
        log("figure 7: burst of %d files" % a.burst)
        s = self.live_changelist(srv, www, burst, 0, grace=60)
        self.live_log_notes(srv, "7")
        self.stop_server(srv)
        while len(w_rates) < max(2, a.reps):
            write_alone()
        w_rate = statistics.median(w_rates)
        wnote = ("the writer alone, as fast as possible, %d new files in a directory no set "
                 "covers (%s)" % (a.burst, ", ".join("%.0f/s" % x for x in w_rates)))
        if sustained:
            r, s1 = sustained
            self.result("7", "sustained: highest step listed with p99 <= %g ms (offered %d/s)"
                        % (TARGETS["6"][1], r), s1["listed_rate"], w_rate, "/s", "i",
                        "baseline: " + wnote)
        else:
            self.notes.append("figure 7: no step was listed with p99 <= %g ms"
                              % TARGETS["6"][1])
        self.result("7", "burst of %d new files: drained (last listed %s after the first "
                    "write)" % (a.burst, fmt_num(s["drain"], "s")),
                    (s["n"] - s["missing"]) / s["drain"] if s["drain"] else 0, w_rate, "/s",
                    "i", "baseline: " + wnote + "; " + self.live_desc(s)
                    + "; p50 %s, p99 %s" % (fmt_num(s["p50"], "ms"), fmt_num(s["p99"], "ms")))

    def fig8(self):
        a = self.args
        www = self.live_setup("8")
        static = os.path.join(www, "plain", "static.xml")
        with open(static, "wb") as fh:
            fh.write(b"<x>" + b"s" * 1000 + b"</x>\n")
        os.chmod(static, 0o644)
        old = time.time() - 3600       # an old mtime: a strong ETag
        os.utime(static, (old, old))
        # An open list of half ResourceSyncMaxEntries (at most 2,000) entries,
        # all in the ring: the list never closes during the runs.
        k = min(2000, a.cl_max // 2)
        changes = self.live_plan(www, "set", "f", k, False)
        srv = self.start_live("live8", www)
        self.live_changelist(srv, www, changes, 0)
        p = Poller(srv.port)
        path = p.open_list(srv.index)
        st, etag, body = p.get(path)
        entries = len(LOC_RX.findall(body))
        copy = os.path.join(www, "plain", "open-copy.xml")
        with open(copy, "wb") as fh:
            fh.write(body)
        os.chmod(copy, 0o644)
        os.utime(copy, (old, old))
        urls = []
        for u in (path, "/plain/static.xml"):
            st, etag, _ = p.get(u)
            st2, _, _ = p.get(u, etag)
            if st != 200 or st2 != 304 or not etag:
                raise RuntimeError("figure 8: %s: %d, then %d with If-None-Match %s"
                                   % (u, st, st2, etag))
            urls.append((srv.base + u, etag))
        st, _, body2 = p.get("/plain/open-copy.xml")
        if st != 200 or body2 != body:
            raise RuntimeError("figure 8: the static copy of the open list differs")
        urls += [(srv.base + path, None), (srv.base + "/plain/open-copy.xml", None)]
        p.close()
        rates = [[] for _ in urls]
        errors = set()
        k_urls = len(urls)
        for i in range(a.wrk_reps):
            for k in [(i + j) % k_urls for j in range(k_urls)]:
                url, etag = urls[k]
                cmd = ["wrk", "-t1", "-c%d" % a.conns, "-d%ds" % a.duration]
                if etag:
                    cmd += ["-H", "If-None-Match: %s" % etag]
                cmd.append(url)
                self.note_cmd("8: wrk", " ".join(shlex.quote(c) for c in cmd))
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=a.duration + 60)
                rate, count, errs = parse_wrk(r.stdout.decode(errors="replace"))
                rates[k].append(rate)
                errors.update(errs)
        p = Poller(srv.port)
        for url, etag in urls[:2]:
            st, _, _ = p.get(urllib.parse.urlsplit(url).path, etag)
            if st != 304:
                errors.add("%s no longer answers 304 after the runs (%d)" % (url, st))
        p.close()
        wrk_err = "; wrk: " + ", ".join(sorted(errors)) if errors else ""
        self.result("8", "304 polls/s of the open Change List (%d entries) vs a static file"
                    % entries, rates[0], rates[1], "req/s", "8",
                    "If-None-Match with the current ETag on both; the static file is %d bytes "
                    "with a strong ETag%s" % (os.path.getsize(static), wrk_err))
        ours = statistics.median(rates[2])
        self.result("8", "200 GETs/s of the open Change List (%d entries, %.0f kB) vs the "
                    "same bytes as a static file" % (entries, len(body) / 1e3), rates[2],
                    rates[3], "req/s", "i",
                    "a poll that finds something new gets the whole open list: %.1f ms, "
                    "%.1f us per entry, generated from the ring at every GET"
                    % (1e3 / ours, 1e6 / ours / max(1, entries)))
        self.stop_server(srv)

    # -- Resource List freshness (figure 10), tail-following (figure 11) ------
    def fresh_plan(self, top, name, n):
        """n changes in a new directory top/name, in turn a new file, the
        rewrite of a file made now (100 -> 150 bytes) and the deletion of a
        file made now: ([(path, kind)], [expected length, or ABSENT])."""
        d = os.path.join(top, name)
        os.makedirs(d)
        os.chmod(d, 0o755)
        changes, lengths = [], []
        for i in range(n):
            kind = "cud"[i % 3]
            f = os.path.join(d, "%s%06d" % (kind, i))
            if kind != "c":
                with open(f, "wb") as fh:
                    fh.write(NEW_BODY)
                os.chmod(f, 0o644)
            changes.append((f, kind))
            lengths.append({"c": len(NEW_BODY), "u": len(REWRITE_BODY), "d": ABSENT}[kind])
        return changes, lengths

    def fresh_max_entries(self):
        """ResourceSyncMaxEntries of figure 10: 50,000 (the module's default),
        less for small trees (N/20, at least 100), so that the list has parts of
        the same size relative to N at every N (about a hundred of them)."""
        return min(MAX_ENTRIES, max(100, self.n // 20))

    def fig10(self):
        a = self.args
        # The changes go to www/fresh: in the set (www), outside the tree
        # (www/data, kept and reused by later runs).
        top = os.path.join(self.www, "fresh")
        shutil.rmtree(top, ignore_errors=True)
        os.makedirs(top)
        os.chmod(top, 0o755)
        self.live_tops.append(top)
        plans = {r: self.fresh_plan(top, "r%g" % r, max(1, int(r * a.live_duration)))
                 for r in a.fresh_rates}
        srv = Server(self, "fresh", self.www, self.www, "md5", max(2, a.conns),
                     self.fresh_max_entries())
        self.servers.append(srv)
        srv.start()
        # the first scan and the first snapshot of N files: generous deadlines
        scanned, _ = srv.wait_log(r"set %s: scanned (\d+) files" % SET, self.scan_timeout())
        line, m = srv.wait_log(r"set %s: published Resource List (\d+) \((\d+) entries, "
                               r"(\d+) parts[,)]" % SET, self.scan_timeout())
        # The module starts the next snapshot no sooner than the last one's
        # end plus the time it took: let that pass, so that the figure shows
        # the steady state, not the wake of the first snapshot (which takes
        # seconds at 10^6 files).
        pub = apache_time(line)
        took = max(0.0, pub - apache_time(scanned))
        rest = min(took + 1, pub + took + 1 - time.time())
        log("figure 10: first list of %s entries in %s parts%s"
            % (m.group(2), m.group(3), "; waiting %.1f s after it" % rest if rest > 0 else ""))
        if rest > 0:
            time.sleep(rest)
        rl = "/resourcesync/%s/resourcelist.xml" % SET
        cl = "/resourcesync/%s/changelist.xml" % SET
        interval = a.poll_interval / 1000.0
        for rate in a.fresh_rates:
            changes, lengths = plans[rate]
            locs = [self.loc_of(srv, self.www, path) for path, _ in changes]
            log("figure 10: %g changes/s for %g s" % (rate, a.live_duration))
            start, closes, _, res = self.live_run_many(
                [(resourcelist_poller, (srv.port, rl, dict(zip(locs, lengths)), interval)),
                 (tail_poller, (srv.port, cl, locs, interval))],
                changes, rate, 60, ready_timeout=self.scan_timeout())
            (rl_seen, rl_st), (cl_seen, cl_st) = res
            ours = self.live_summary(start, closes, [(rl_seen[l] - c) / 1e6 if l in rl_seen
                                                     else None for l, c in zip(locs, closes)],
                                     rl_st)
            base = self.live_summary(start, closes, [(cl_seen[l] - c) / 1e6 if l in cl_seen
                                                     else None for l, c in zip(locs, closes)],
                                     cl_st)
            self.fig10_report(rate, ours, base)
        self.live_log_notes(srv, "10")
        self.stop_server(srv)

    def fig10_report(self, rate, ours, base):
        n = ours["n"]
        for q in ("p50", "p99", "max"):
            key = "10" if (q == "p50" and rate == min(self.args.fresh_rates)) else "i"
            self.result("10", "Resource List freshness: close to a list showing the change, "
                        "%s, %g changes/s" % (q, rate), ours[q], base[q], "ms", key,
                        "" if q != "max" else
                        "%d changes (a new file, a rewrite, a deletion in turn), writer "
                        "%.1f/s, %d never seen in the Resource List, %d never seen in the "
                        "open Change List; baseline: the same changes seen in the open Change "
                        "List at the same time, followed with byte ranges (figure 11's tail "
                        "follower; its p50 %s, p99 %s)"
                        % (n, ours["writer_rate"], ours["missing"], base["missing"],
                           fmt_num(base["p50"], "ms"), fmt_num(base["p99"], "ms")))
        self.result("10", "bytes read per change following the Resource List, %g changes/s"
                    % rate, ours["bytes"] / n, ours["whole"] / n, "B", "i",
                    "%d polls of the index, %d new indexes read; %d parts fetched (200), "
                    "%d revalidated with "
                    "If-None-Match (304: unchanged), %d changed under the same URL; with the "
                    "response heads %.0f B per change; %d parts in the last list. Baseline: "
                    "the whole list (index and every part) read at each new index"
                    % (ours["requests"] - ours["revalidated"]
                       - (ours["ok"] - ours["lists"] - ours["changed_in_place"]), ours["lists"],
                       ours["ok"] - ours["lists"] - ours["changed_in_place"],
                       ours["revalidated"],
                       ours["changed_in_place"], (ours["bytes"] + ours["head_bytes"]) / n,
                       ours["parts"]))

    def fig11(self):
        a = self.args
        www = self.live_setup("11")
        rate = a.tail_rate
        changes = self.live_plan(www, "set", "t", max(1, int(rate * a.live_duration)), True)
        srv = self.start_live("live11", www)
        locs = [self.loc_of(srv, www, p) for p, _ in changes]
        interval = a.poll_interval / 1000.0
        log("figure 11: %g changes/s for %g s" % (rate, a.live_duration))
        start, closes, _, res = self.live_run_many(
            [(tail_poller, (srv.port, srv.index, locs, interval)),
             (changelist_poller, (srv.port, srv.index, locs, interval))], changes, rate, 10)
        (t_seen, t_st), (w_seen, w_st) = res
        tail = self.live_summary(start, closes, [(t_seen[l] - c) / 1e6 if l in t_seen else None
                                                 for l, c in zip(locs, closes)], t_st)
        whole = self.live_summary(start, closes, [(w_seen[l][0] - c) / 1e6 if l in w_seen
                                                  else None for l, c in zip(locs, closes)], w_st)
        self.live_log_notes(srv, "11")
        self.stop_server(srv)
        n = tail["n"]
        entry = tail["entry_bytes"] / tail["entries"] if tail["entries"] else None
        self.result("11", "bytes a destination reads per change of the open Change List, "
                    "%g changes/s: Range tail vs whole list" % rate, tail["bytes"] / n,
                    whole["bytes"] / n, "B", "i",
                    "%d changes, writer %.1f/s, %d Change Lists. Tail: %d polls, %d empty "
                    "(nothing new: %d answered 304, the others 206 with the closing tag alone, "
                    "%d B per change), %d answered 206 with new entries, %d "
                    "answered 200 (the index, and the lists read whole: %d after a list "
                    "closed), "
                    "%.0f B per change with the response heads, latency p50 %s, p99 %s, %d "
                    "never seen. Whole list (figure 6's poller, If-None-Match, at the same "
                    "time): %d polls, %d answered 200, %.0f B per change with the heads, "
                    "latency p50 %s, p99 %s, %d never seen"
                    % (n, tail["writer_rate"], tail["lists"], tail["requests"],
                       tail["empty"], tail["notmod"],
                       (tail["empty"] - tail["notmod"]) * len(URLSET_END) / n,
                       tail["partial"] - (tail["empty"] - tail["notmod"]),
                       tail["ok"], tail["whole_reads"], (tail["bytes"] + tail["head_bytes"]) / n,
                       fmt_num(tail["p50"], "ms"), fmt_num(tail["p99"], "ms"), tail["missing"],
                       whole["requests"], whole["ok"], (whole["bytes"] + whole["head_bytes"]) / n,
                       fmt_num(whole["p50"], "ms"), fmt_num(whole["p99"], "ms"),
                       whole["missing"]))
        self.result("11", "bytes a destination reads per change with the Range tail vs the "
                    "mean bytes of one entry (the floor)", tail["bytes"] / n, entry, "B", "i",
                    "%d entries arrived in 206 bodies, %d bytes; the rest is the closing tags "
                    "and the lists read whole" % (tail["entries"], tail["entry_bytes"]))

    # -- the watcher's memory over many journaled changes (figure 9) --------
    def fig9(self):
        a = self.args
        www = self.live_setup("9")
        setdir = os.path.join(www, "set")
        log("figure 9: a pool of %d files" % a.rss_pool)
        pool = ChangePool(os.path.join(setdir, "pool"), a.rss_pool)
        srv = Server(self, "rss9", www, setdir, "md5", 2, a.cl_max,
                     set_extra="    ResourceSyncJournalRetention %d\n" % a.rss_retention,
                     rescan=RSS_RESCAN,
                     server_extra='<Location "%s">\n    SetHandler resourcesync-status\n'
                                  '    Require all granted\n</Location>' % STATUS_PATH)
        self.servers.append(srv)
        srv.start()
        srv.wait_log(r"set %s: published Resource List" % SET, 120)
        db = os.path.join(srv.dir, "state", "state.db")
        poller = Poller(srv.port)
        try:
            samples, elapsed = self.rss_run(srv, pool, poller, db)
        finally:
            poller.close()
        self.rss_report(srv, pool, samples, elapsed)
        self.live_log_notes(srv, "9")
        self.stop_server(srv)

    def rss_run(self, srv, pool, poller, db):
        """Make changes, at most RSS_WINDOW ahead of what the watcher has
        journaled, until it has journaled --rss-changes of them; sample the
        watcher's memory and the journal at every 1% of them.  Returns
        ([sample dicts], seconds)."""
        n = self.args.rss_changes
        window = min(RSS_WINDOW, pool.size // 2)
        wpid, head0 = watcher_status(poller)
        if not wpid or wpid != srv.watcher():
            raise RuntimeError("figure 9: no watcher (status page: %s)" % wpid)
        log("figure 9: %d changes, watcher %d, %d at most outstanding" % (n, wpid, window))
        samples = []
        t0 = time.monotonic()
        done = 0
        while True:
            pid_now, _ = watcher_status(poller)
            mem = proc_mem(wpid)
            recs, lists = journal_counts(db)
            samples.append(dict(done=done, t=time.monotonic() - t0, ops=pool.ops, mem=mem,
                                records=recs, lists=lists, pid=pid_now))
            if pid_now != wpid or not mem:
                raise RuntimeError("figure 9: the watcher %d went away (now %s), see %s"
                                   % (wpid, pid_now, srv.error_log))
            if done >= n:
                break
            if len(samples) % 10 == 1:
                log("figure 9: %d changes journaled (%.0f/s), VmRSS %d kB, %d records"
                    % (done, done / max(samples[-1]["t"], 1e-3), mem["VmRSS"], recs))
            mark = (done * 100 // n + 1) * n // 100     # the next whole percent
            done = journal_changes(srv, pool, poller, head0, done, mark, window, "9")
        return samples, time.monotonic() - t0

    def rss_report(self, srv, pool, samples, elapsed):
        n = self.args.rss_changes

        def at(pct):
            """The first sample at or past pct% of the changes."""
            return next(s for s in samples if s["done"] >= n * pct // 100)
        warm, half, end = at(5), at(50), at(100)
        rss = lambda s, k="VmRSS": s["mem"].get(k, 0)
        growth = rss(end) - rss(warm)
        per100k = slope([(s["done"], rss(s)) for s in samples if s["done"] >= warm["done"]]) * 1e5
        flat = growth <= TARGETS["9"][1]
        log("figure 9: watcher RSS flat over %d journaled changes: %s (%+d kB after warm-up)"
            % (end["done"], "YES" if flat else "NO", growth))
        setup = ("%d changes journaled (%d made: %s) in %.0f s, %.0f/s; a pool of %d files, "
                 "at most %d changes outstanding; ResourceSyncMaxEntries %d, "
                 "ResourceSyncJournalRetention %d s, ResourceSyncRescanInterval %d s; "
                 "%d closed Change Lists kept at the end"
                 % (end["done"], end["ops"], ", ".join("%d %s" % (v, k) for k, v in
                                                      pool.kinds.items()),
                    elapsed, end["done"] / elapsed, pool.size,
                    min(RSS_WINDOW, pool.size // 2), self.args.cl_max,
                    self.args.rss_retention, RSS_RESCAN, end["lists"]))
        series = "; ".join("%d%%: %d/%d/%d kB, %d records"
                           % (p, rss(s), rss(s, "RssAnon"), rss(s, "RssShmem"), s["records"])
                           for p, s in ((p, at(p)) for p in (0, 5, 10, 20, 30, 40, 50, 60,
                                                             70, 80, 90, 100)))
        self.result("9", "watcher VmRSS after warm-up (%d changes, 5%%)" % warm["done"],
                    rss(warm), None, "kB", "i", setup)
        self.result("9", "watcher VmRSS at 50%% (%d changes) vs after warm-up" % half["done"],
                    rss(half), rss(warm), "kB", "i")
        self.result("9", "watcher VmRSS at 100%% (%d changes) vs after warm-up" % end["done"],
                    rss(end), rss(warm), "kB", "i",
                    "VmRSS/RssAnon/RssShmem and journal records every 10%%: %s; VmHWM at the "
                    "end %d kB" % (series, rss(end, "VmHWM")))
        self.result("9", "watcher VmRSS growth from 5%% to 100%% of the changes (flat: %s)"
                    % ("YES" if flat else "NO"), growth, None, "kB", "9",
                    "RssAnon (malloc's heap and arenas, APR's pool nodes) %+d kB" % (rss(end, "RssAnon") - rss(warm, "RssAnon")))
        self.result("9", "watcher VmRSS growth per 100,000 changes (least squares from 5%)",
                    per100k, None, "kB", "i")
        self.result("9", "journal records kept at 100%% (at 5%%: %d, at 50%%: %d; retention "
                    "%d s)" % (warm["records"], half["records"], self.args.rss_retention),
                    end["records"], None, "records", "i",
                    "most in a sample: %d" % max(s["records"] for s in samples))

    # -- the watcher's peak at start against the retained journal (figure 12)
    def fig12(self):
        a = self.args
        www = self.live_setup("12")
        setdir = os.path.join(www, "set")
        log("figure 12: a set of %d files" % a.start_files)
        pool = ChangePool(os.path.join(setdir, "pool"), a.start_files, unique=True)
        os.makedirs(os.path.join(setdir, "offline"))
        os.chmod(os.path.join(setdir, "offline"), 0o755)
        srv = Server(self, "start12", www, setdir, "md5 sha-256", 2, a.cl_max,
                     set_extra="    ResourceSyncChangeDump on\n    ResourceSyncNotify on\n",
                     server_extra='ResourceSyncHub on\n<Location "%s">\n    SetHandler '
                                  'resourcesync-status\n    Require all granted\n</Location>'
                                  % STATUS_PATH)
        self.servers.append(srv)
        srv.start()
        db = os.path.join(srv.dir, "state", "state.db")
        fresh = self.start_peak(srv, db, "a fresh store")
        points = [(0, self.restart_peak(srv, setdir, db, 0))]
        t_fill = 0.0
        for n in a.start_changes:
            t0 = time.monotonic()
            self.fill_journal(srv, pool, n - points[-1][1]["records"])
            t_fill += time.monotonic() - t0
            points.append((n, self.restart_peak(srv, setdir, db, len(points))))
        self.start_report(fresh, points, pool, t_fill)
        self.live_log_notes(srv, "12")
        self.stop_server(srv)

    def fill_journal(self, srv, pool, n):
        """n more journaled changes of pool (none when n <= 0)."""
        if n <= 0:
            return
        poller = Poller(srv.port)
        try:
            _, head0 = watcher_status(poller)
            log("figure 12: %d more changes" % n)
            journal_changes(srv, pool, poller, head0, 0, n, min(RSS_WINDOW, pool.size // 2), "12",
                            pool.ops, True)
        finally:
            poller.close()

    def start_peak(self, srv, db, what):
        """The peak of the watcher that srv started last, once it published
        its first Resource List and went idle: {mem, records, lists,
        captures, settle, what}."""
        deadline = time.time() + 60
        while not srv.watcher():
            if time.time() > deadline:
                raise RuntimeError("figure 12: no watcher (see %s)" % srv.error_log)
            time.sleep(0.05)
        w = srv.watcher()
        srv.wait_log(r"\[pid %d:tid \d+\] mod_resourcesync: set %s: published Resource List"
                     % (w, SET), self.scan_timeout())
        settle = wait_idle(w)
        mem = proc_mem(w)
        if srv.watcher() != w or not mem:
            raise RuntimeError("figure 12: the watcher %d went away, see %s" % (w, srv.error_log))
        recs, lists = journal_counts(db)
        cap = os.path.join(srv.dir, "state", "capture", SET)
        out = dict(mem=mem, records=recs, lists=lists, what=what, settle=settle,
                   captures=len(os.listdir(cap)) if os.path.isdir(cap) else 0)
        log("figure 12: watcher %d after start on %s: VmHWM %d kB, %d records, %d lists, "
            "%d captures" % (w, what, mem["VmHWM"], recs, lists, out["captures"]))
        return out

    def restart_peak(self, srv, setdir, db, k):
        """Stop the server once its watcher is idle, make one change while
        no watcher runs (the next start journals it and writes a
        snapshot), start it again: the new watcher's start_peak."""
        wait_idle(srv.watcher())
        srv.stop()
        path = os.path.join(setdir, "offline", "f%d" % k)
        with open(path, "wb") as fh:
            fh.write(NEW_BODY)
        os.chmod(path, 0o644)
        srv.start()
        return self.start_peak(srv, db, "a store of %d journal records"
                               % journal_counts(db)[0])

    def start_report(self, fresh, points, pool, t_fill):
        hwm = lambda x: x["mem"].get("VmHWM", 0)
        desc = lambda x: ("VmHWM/VmRSS/RssAnon/RssShmem %d/%d/%d/%d kB; %d journal records, "
                          "%d closed Change Lists, %d captures; idle %.1f s after the first "
                          "Resource List" % (hwm(x), x["mem"].get("VmRSS", 0),
                                             x["mem"].get("RssAnon", 0),
                                             x["mem"].get("RssShmem", 0), x["records"],
                                             x["lists"], x["captures"], x["settle"]))
        self.result("12", "watcher VmHWM after start on a fresh store (first scan, snapshot)",
                    hwm(fresh), None, "kB", "i",
                    "%s; %d changes made in %.0f s (%s)"
                    % (desc(fresh), pool.ops, t_fill,
                       ", ".join("%d %s" % (v, k) for k, v in pool.kinds.items())))
        for n, x in points:
            self.result("12", "watcher VmHWM after a restart on %d retained changes vs a fresh "
                        "store" % n, hwm(x), hwm(fresh), "kB", "i", desc(x))
        if len(points) > 2:
            (n1, x1), (n2, x2) = points[-2], points[-1]
            self.result("12", "watcher VmHWM after a restart on %d vs %d retained changes "
                        "(flat: %s)" % (n2, n1, "YES" if hwm(x2) <= hwm(x1) * TARGETS["12"][1]
                                        else "NO"), hwm(x2), hwm(x1), "kB", "12")

    def live_log_notes(self, srv, fig):
        text = srv.log_text()
        n = text.count("inotify event queue overflowed")
        if n:
            self.notes.append("figure %s: the inotify event queue overflowed %d time(s); the "
                              "set was reconciled by full scans" % (fig, n))
        if re.search(r"\[resourcesync:(error|crit|alert|emerg)\]", text):
            self.notes.append("figure %s: the module logged errors (see %s)" % (fig, srv.error_log))

    # -- output --------------------------------------------------------------
    def table(self):
        rows = [("fig", "figure", "ours", "baseline", "ratio", "target", "met")]
        for r in sorted(self.results, key=fig_key):
            rows.append((r["fig"], r["name"], fmt_num(r["ours"], r["unit"]),
                         fmt_num(r["base"], r["unit"]),
                         "-" if r["ratio"] is None else "%.2f" % r["ratio"], r["target"],
                         "-" if r["ok"] is None else ("yes" if r["ok"] else "NO")))
        return rows

    def text_table(self):
        rows = self.table()
        w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = []
        for j, r in enumerate(rows):
            lines.append("  ".join(c.ljust(w[i]) if i == 1 else c.rjust(w[i]) if i != 0 else c.ljust(w[i])
                                   for i, c in enumerate(r)).rstrip())
            if j == 0:
                lines.append("  ".join("-" * x for x in w))
        return "\n".join(lines)

    def markdown(self, facts, started, elapsed):
        rows = self.table()
        if self.figs & {"1", "2", "3", "4", "5", "10"}:
            out = ["### %d files, %s" % (self.n, facts["date"]), ""]
        else:       # no generated tree
            out = ["### figures %s, %s" % (self.args.figures, facts["date"]), ""]
        out.append("Machine: %s CPUs (%s), kernel %s, %s RAM; %s; module at %s. "
                   "Load average at start %s, at end %.2f %.2f %.2f. Total run time %.0f s."
                   % (facts["nproc"], facts["cpu"], facts["kernel"], facts["memory"],
                      facts["httpd"], facts["commit"], facts["load"], *os.getloadavg(), elapsed))
        out.append("")
        out.append("Command: `%s`" % started)
        out.append("")
        out.append("| " + " | ".join(rows[0]) + " |")
        out.append("|" + "|".join(["---"] * len(rows[0])) + "|")
        for r in rows[1:]:
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
        out.append("")
        out.append("Notes:")
        for r in sorted(self.results, key=fig_key):
            if r["note"]:
                out.append("- %s %s: %s" % (r["fig"], r["name"], r["note"]))
        for n in self.notes:
            out.append("- " + n)
        out.append("- Servers: httpd prefork with %d child(ren) (StartServers = MaxRequestWorkers "
                   "= %d, KeepAlive On, MaxKeepAliveRequests 0), LogLevel warn resourcesync:info, "
                   "ResourceSyncMaxEntries %d, ResourceSyncRescanInterval 86400; "
                   "figure 1 module: ResourceSyncHash none; figures 2 (module), 4 and 5: "
                   "ResourceSyncHash md5 sha-256; figure 4: the part and its static copy both "
                   "with EnableSendfile Off (httpd's default), then both with EnableSendfile On "
                   "(an <If> on the query string \"sendfile\"); figure 5 small set: the subtree a0 "
                   "(a tenth of the files) in a server of its own."
                   % (self.args.conns, self.args.conns, MAX_ENTRIES))
        if "9" in self.figs:
            out.append("- Figure 9: a server of its own (prefork, 2 children; the "
                       "resourcesync-status page at %s), the watcher's memory read from "
                       "/proc/PID/status of the process named rs-watcher at every 1%% of the "
                       "changes, the journal counted in the state store (read-only)."
                       % STATUS_PATH)
        if "12" in self.figs:
            out.append("- Figure 12: a server of its own (prefork, 2 children, ResourceSyncHub "
                       "on; the resourcesync-status page at %s) with one set of %d files in "
                       "directories of 100 (ResourceSyncHash md5 sha-256, "
                       "ResourceSyncMaxEntries %d, ResourceSyncChangeDump on, "
                       "ResourceSyncNotify on, the default ResourceSyncJournalRetention of "
                       "30 days: nothing expires). Figure 9's writer (every version's bytes "
                       "unique) makes the changes, through the running server; before each "
                       "restart the watcher is let go idle, httpd is stopped, one file is "
                       "added while no watcher runs (so the new watcher journals it and "
                       "writes a snapshot), and httpd is started again. The peak is "
                       "VmHWM of the process named rs-watcher once it published its first "
                       "Resource List and then used less than 5%% of a CPU for 2 s (its "
                       "startup reconciliation, first snapshot, and the jobs a start runs: "
                       "the Change Dump's, the notifications'). RssShmem is the shared "
                       "segment, whose ring of recent changes the watcher fills at start "
                       "once the journal holds records (ResourceSyncRecentChanges of them)."
                       % (STATUS_PATH, self.args.start_files, self.args.cl_max))
        if self.figs & {"6", "7", "8"}:
            a = self.args
            out.append("- Figures 6, 7, 8: a server of their own each (prefork, %d children), "
                       "a set of its own (ResourceSyncHash md5, ResourceSyncMaxEntries %d, so an "
                       "open Change List holds at most %d entries), files of 100 bytes (150 "
                       "when rewritten); writer, poller and harness are separate processes; "
                       "each close is timed just before close(2) (time.monotonic_ns, and the "
                       "wall clock for the entry's datetime); the pollers keep one connection "
                       "alive and wait %g ms after a poll that found nothing new; figure 6: %g s "
                       "per rate, every other change the rewrite of an existing file; figure 7: "
                       "new files, %g s per step, burst of %d."
                       % (max(2, a.conns), a.cl_max, a.cl_max, a.poll_interval,
                          a.live_duration, a.step_duration, a.burst))
        if "10" in self.figs:
            a = self.args
            out.append("- Figure 10: a server of its own (prefork, %d children) with one set, "
                       "the DocumentRoot of the tree (its %d files and www/fresh), "
                       "ResourceSyncHash md5, ResourceSyncMaxEntries %d (parts cut by "
                       "content, smaller on average; the open Change Lists close at that many "
                       "entries); the first snapshot's duration let pass before the changes; "
                       "%g s per rate; the changes in a new directory www/fresh/r<rate> "
                       "(a new 100-byte file, the rewrite of a 100-byte file to 150, the "
                       "deletion of a file, in turn), each timed just before close(2) or "
                       "unlink(2). Two pollers at the same time, each on one kept-alive "
                       "connection, %g ms after a poll that found nothing new: the Resource "
                       "List follower (the index with If-None-Match; on a new index, the part "
                       "URLs it has not read fetched whole, then the parts it holds "
                       "revalidated with If-None-Match; a change is shown when the list, "
                       "index and new parts in hand, lists the path with its new length, or "
                       "no longer lists a deleted path) and figure 11's tail follower of the "
                       "open Change List (the same observation as figure 6's poller, but "
                       "O(new entries) per poll: with ResourceSyncMaxEntries 50000 an open "
                       "list grows to thousands of entries, which figure 6's poller would "
                       "read whole at every change, loading the machine it measures). The "
                       "list as it was before the changes is read before the writer starts "
                       "and not counted."
                       % (max(2, a.conns), self.n, self.fresh_max_entries(), a.live_duration,
                          a.poll_interval))
        if "11" in self.figs:
            a = self.args
            out.append("- Figure 11: a server of its own like figure 6's (ResourceSyncMaxEntries "
                       "%d), %g changes/s for %g s (every other change the rewrite of an "
                       "existing file). Two pollers on the same changes at the same time, "
                       "%g ms after a poll that found nothing new: the tail follower (GET with "
                       "If-None-Match, Range: bytes=<its length minus the closing tag>- and "
                       "If-Range: <its ETag>; a 206 is the new entries and the closing tag, a "
                       "200 a document read whole; after a closed list the next open list is "
                       "read whole) and figure 6's poller (If-None-Match; every 200 is the "
                       "whole open list). Bytes are the bodies of 200 and 206 responses, "
                       "index reads included; the notes also give them with the response "
                       "heads."
                       % (a.cl_max, a.tail_rate, a.live_duration, a.poll_interval))
        out.append("")
        out.append("Commands (medians of %d interleaved repetitions; wrk: medians of %d "
                   "interleaved runs of %d s, 1 thread, %d connection(s)):"
                   % (self.args.reps, self.args.wrk_reps, self.args.duration, self.args.conns))
        out.append("")
        out.append("```")
        for what, cmd in self.commands:
            out.append("# %s\n%s" % (what, cmd))
        out.append("```")
        return "\n".join(out) + "\n"

    def run(self):
        a = self.args
        self.figs = set(a.figures.split(","))
        started = "bench/run " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("%d files, reps %d, figures %s, work dir %s" % (self.n, a.reps, a.figures, self.work))
        if self.figs & {"1", "2", "3", "4", "5", "10"}:
            self.make_tree()
        if self.figs & {"1", "3"}:
            self.fig1_engine()
        if "2" in self.figs:
            self.fig2_engine()
        if "3" in self.figs:
            self.fig3_engine()
        if "1" in self.figs:
            self.fig1_module()
        if self.figs & {"4", "5"} or "2" in self.figs:
            self.fig45_module()
        if "6" in self.figs:
            self.fig6()
        if "7" in self.figs:
            self.fig7()
        if "8" in self.figs:
            self.fig8()
        if "9" in self.figs:
            self.fig9()
        if "10" in self.figs:
            self.fig10()
        if "11" in self.figs:
            self.fig11()
        if "12" in self.figs:
            self.fig12()
        self.report("mod_resourcesync benchmarks", "results", facts, started, time.time() - t0)
        if a.remove_tree:
            shutil.rmtree(self.tree_top, ignore_errors=True)
            try:
                os.unlink(self.data + ".complete")
            except OSError:
                pass

    def cleanup(self):
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
        for srv in self.servers:
            try:
                srv.stop()
            except Exception as e:      # keep stopping the others
                log("stopping %s: %s" % (srv.dir, e))
            if not self.args.keep:
                shutil.rmtree(srv.dir, ignore_errors=True)
        if not self.args.keep and os.path.isdir(self.scratch):
            shutil.rmtree(self.scratch, ignore_errors=True)
        if not self.args.keep:
            for top in self.live_tops:
                shutil.rmtree(top, ignore_errors=True)


def run_guarded(runner):
    """Run runner.run() with signals turned into Stop, always cleaning up;
    the exit status of a benchmark script."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        runner.run()
    except Stop as e:
        log("stopped (%s); cleaning up" % e)
        return 1
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        log("error: %s" % e)
        return 1
    finally:
        runner.cleanup()
    return 0


def main():
    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="?", type=int, help="files in the tree (default 20000; "
                    "2000 with --quick)")
    ap.add_argument("--quick", action="store_true", help="small tree, one repetition, one 2 s wrk run")
    ap.add_argument("--reps", type=int, help="repetitions of each measurement (default 3)")
    ap.add_argument("--duration", type=int, help="seconds per wrk run (default 5)")
    ap.add_argument("--wrk-reps", type=int, help="wrk runs per URL, interleaved (default 7)")
    ap.add_argument("--conns", type=int, default=1,
                    help="wrk connections = httpd children (default 1)")
    ap.add_argument("--figures", default=DEFAULT_FIGURES, help="which figures (default all)")
    ap.add_argument("--live-duration", type=float,
                    help="figures 6, 10, 11: seconds of changes per rate (default 5; 2 with "
                    "--quick)")
    ap.add_argument("--fresh-rates", default="1,100",
                    help="figure 10: rates in changes/s (default 1,100)")
    ap.add_argument("--tail-rate", type=float, default=100,
                    help="figure 11: changes/s (default 100)")
    ap.add_argument("--poll-interval", type=float, default=1.0,
                    help="figures 6, 7, 10, 11: ms the pollers wait after a poll that found nothing "
                    "new (default 1; 0: poll without pause)")
    ap.add_argument("--cl-max", type=int, default=1000,
                    help="figures 6, 7, 8, 11, 12: ResourceSyncMaxEntries of the set, the most "
                    "entries an open Change List holds (default 1000)")
    ap.add_argument("--steps", default="1000,2000,5000,10000,20000,50000",
                    help="figure 7: offered rates in changes/s (default "
                    "1000,2000,5000,10000,20000,50000; only those the writer reaches)")
    ap.add_argument("--step-duration", type=float,
                    help="figure 7: seconds per step (default 2; 1 with --quick)")
    ap.add_argument("--burst", type=int,
                    help="figure 7: files of the burst (default 20000; 5000 with --quick)")
    ap.add_argument("--rss-changes", type=int,
                    help="figure 9: journaled changes (default 1000000; 20000 with --quick)")
    ap.add_argument("--rss-pool", type=int, default=4000,
                    help="figure 9: files the writer changes in turn (default 4000)")
    ap.add_argument("--rss-retention", type=int, default=30,
                    help="figure 9: ResourceSyncJournalRetention in s (default 30)")
    ap.add_argument("--start-changes",
                    help="figure 12: retained changes at each restart (default 50000,500000; "
                    "5000,20000 with --quick)")
    ap.add_argument("--start-files", type=int,
                    help="figure 12: files of the set (default 7000; 2000 with --quick)")
    ap.add_argument("--md", help="also write the Markdown results to this file")
    ap.add_argument("--keep", action="store_true", help="keep server dirs and scratch files")
    ap.add_argument("--remove-tree", action="store_true", help="delete the tree at the end")
    a = ap.parse_args()
    if a.files is None:
        a.files = 2000 if a.quick else 20000
    if a.reps is None:
        a.reps = 1 if a.quick else 3
    if a.duration is None:
        a.duration = 2 if a.quick else 5
    if a.wrk_reps is None:
        a.wrk_reps = 1 if a.quick else 7
    if a.live_duration is None:
        a.live_duration = 2 if a.quick else 5
    if a.step_duration is None:
        a.step_duration = 1 if a.quick else 2
    if a.burst is None:
        a.burst = 5000 if a.quick else 20000
    if a.rss_changes is None:
        a.rss_changes = 20000 if a.quick else 1000000
    if a.start_changes is None:
        a.start_changes = "5000,20000" if a.quick else "50000,500000"
    if a.start_files is None:
        a.start_files = 2000 if a.quick else 7000
    try:
        a.start_changes = sorted(int(x) for x in a.start_changes.split(","))
    except ValueError:
        ap.error("--start-changes: a list of numbers, e.g. 50000,500000")
    if not (a.start_changes and a.start_changes[0] >= 1 and a.start_changes[-1] <= 10000000
            and 200 <= a.start_files <= 100000):
        ap.error("start-changes 1..10000000, start-files 200..100000")
    if not (1000 <= a.rss_changes <= 100000000 and 200 <= a.rss_pool <= 100000
            and 1 <= a.rss_retention <= 86400):
        ap.error("rss-changes 1000..100000000, rss-pool 200..100000, rss-retention 1..86400")
    try:
        a.steps = sorted(int(x) for x in a.steps.split(","))
    except ValueError:
        ap.error("--steps: a list of rates, e.g. 1000,2000,5000")
    try:
        a.fresh_rates = sorted(set(float(x) for x in a.fresh_rates.split(",")))
    except ValueError:
        ap.error("--fresh-rates: a list of rates, e.g. 1,100")
    if not (a.fresh_rates and 0.1 <= a.fresh_rates[0] and a.fresh_rates[-1] <= 10000
            and 1 <= a.tail_rate <= 10000):
        ap.error("fresh-rates 0.1..10000, tail-rate 1..10000")
    if not (0.5 <= a.live_duration <= 60 and 0.5 <= a.step_duration <= 60
            and 100 <= a.burst <= 1000000 and 0 <= a.poll_interval <= 1000
            and 100 <= a.cl_max <= 1000000 and a.steps and min(a.steps) > 0):
        ap.error("live-duration and step-duration 0.5..60, burst 100..1000000, "
                 "poll-interval 0..1000, cl-max 100..1000000, steps > 0")
    if a.files < 1000 or a.files > 20000000:
        ap.error("files: 1000 .. 20000000")
    if not (1 <= a.reps <= 20 and 1 <= a.wrk_reps <= 20 and 1 <= a.duration <= 600
            and 1 <= a.conns <= 64):
        ap.error("reps and wrk-reps 1..20, duration 1..600, conns 1..64")
    return run_guarded(Bench(a))


if __name__ == "__main__":
    sys.exit(main())
