#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cluster.py - several nodes on one PostgreSQL store: failover and the
followers' serving (run it through `bench/run --cluster`).

Two nodes, each a private httpd (bench.Server: prefork, --conns children)
with `ResourceSyncStore pgsql "DSN"` on one private PostgreSQL cluster
(store.PgCluster, a database of its own), `ResourceSyncNodeName node-a` /
`node-b`, `ResourceSyncFailover --failover` (default 2 s), the same tree
(tree-N/www/data, bench/make-tree) as their one set and the same
`ResourceSyncBaseURL` (a balancer's URL: the documents of both nodes name
the same URLs).  Node a starts first and writes the set; node b follows.

  C2 change -> served           a change every 1/--rate s (default 20/s) for
                                --duration s (default 20), every other one the
                                rewrite of an existing file (figure 6's
                                writer); one poller per node follows its open
                                Change List (figure 6's poller).  Per change:
                                close -> served by the leader, close -> served
                                by the follower, follower - leader, and the
                                entry's datetime (the leader journaled it) ->
                                served by the follower (the issue: within
                                100 ms)
  C3 follower vs leader         wrk (--conns connections, --wrk-reps runs of
                                --duration / --wrk-reps s per URL and node,
                                interleaved): If-None-Match polls (304) of the
                                open Change List, of resourcelist.xml and of the
                                largest Resource List part, and 200 GETs of it;
                                the documents are checked byte-identical (and
                                their ETags equal) on both nodes first.
                                Ratio follower / leader (target >= 0.9)
  C1 failover                   --reps times (default 10): a writer makes a
                                new file every 50 ms; the writing node (the
                                holder in the table leases) is killed
                                (SIGKILL of its httpd parent, its children
                                and its watcher); the other node's open
                                Change List is polled every 20 ms (If-None-
                                Match; a 200 is read whole) until it lists a
                                file closed after the kill.  Split into kill
                                -> the lease's expiry (its expires, read from
                                the store just after the kill), -> the new
                                writer's "takes it over" log line, -> served.
                                The killed node is then started again and
                                waited for as a follower (the nodes alternate)

Until followers serve (a follower answers the set's documents 503), C2
and C3 cannot measure: the harness says so and goes on; C1 measures the
takeover (the new writer serves what it writes) all the same.  Changes
are made in data/cluster-c2 (made before the nodes start) and
data/cluster-fo (one directory per repetition); both are removed at the
end, once the nodes are stopped.  Results go to
$RS_BENCH_DIR/results-cluster-N.md.
"""
import multiprocessing
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import (LOC_RX, NEW_BODY, SET, Poller, apache_time, changelist_poller,  # noqa: E402
                   child_signals, children_of, cmdline, fmt_num, log, open_path, parse_wrk,
                   percentile, w3c_ns, wait_idle)
from store import PG_SETTINGS, PgCluster, number_in, take_option  # noqa: E402

bench.TARGETS.update({
    "c2": ("<=", 100, "ms"),   # the leader's journaling -> served by the follower, p99
    "c3": (">=", 0.9),         # follower / leader, polls and part serving
})
BASE = "http://rs-cluster.example"      # ResourceSyncBaseURL of both nodes
NAMES = ("node-a", "node-b")
STATUS = "/rs-status"
INDEX = "/resourcesync/%s/changelist.xml" % SET
RLIST = "/resourcesync/%s/resourcelist.xml" % SET
FO_PERIOD = 0.05        # C1's writer: a new file every 50 ms
FO_POLL = 0.02          # C1's poller: every 20 ms
TAKES_OVER = r"set %s: no other node writes it now; this node takes it over" % SET
MODE_RX = re.compile(r"^SetMode: (\S+)$", re.M)


class Unavailable(Exception):
    """The follower does not serve the set's documents (503: this build's
    followers do not serve yet), or serves others than the leader's."""


def node_conf(dsn, name, failover):
    """What a node adds to bench.Server's configuration."""
    return "\n".join(['ResourceSyncStore pgsql "%s"' % dsn, "ResourceSyncNodeName " + name,
                      "ResourceSyncFailover %gs" % failover, "ResourceSyncBaseURL " + BASE,
                      '<Location "%s">' % STATUS, "    SetHandler resourcesync-status",
                      "    Require all granted", "</Location>", ""])


class Node(bench.Server):
    """A node of the cluster: bench.Server with the shared store, a node
    name, the failover time, the common base URL and a status page.  It can
    be killed (SIGKILL: the node dies) and started again; log_at is where
    the error log stood at its last mark()."""

    def __init__(self, b, name, dsn):
        a = b.args
        super().__init__(b, name, b.www, b.data, "md5", max(2, a.conns), a.cl_max,
                         server_extra=node_conf(dsn, name, a.failover))
        self.node = name
        self.log_at = 0

    def write_conf(self):
        """bench.Server's, with one ServerRoot for both nodes, as for nodes
        of one installation: it is part of the configuration's fingerprint,
        which the open Change List's ETag includes (ServerName, Listen, the
        state and run-time directories are not)."""
        super().write_conf()
        with open(self.conf) as f:
            text = f.read()
        with open(self.conf, "w") as f:
            f.write(text.replace('ServerRoot "%s"' % self.dir,
                                 'ServerRoot "%s"' % self.bench.work, 1))

    def mark(self):
        self.log_at = len(self.log_text())

    def line_since(self, regex):
        """The first line of the error log after the mark matching regex, or None."""
        rx = re.compile(regex)
        for line in self.log_text()[self.log_at:].splitlines():
            if rx.search(line):
                return line
        return None

    def mode(self):
        """The set's mode on the status page (None: no answer)."""
        try:
            p = Poller(self.port)
            st, _, body = p.get(STATUS + "?auto")
            p.close()
        except OSError:
            return None
        m = MODE_RX.search(body.decode("latin-1")) if st == 200 else None
        return m.group(1) if m else None

    def kill(self):
        """SIGKILL to the httpd parent, its children and its watcher, at
        once: the node dies without releasing its lease."""
        pids = [self.pid] + [p for p, _ in children_of(self.pid)]
        pids = [p for p in pids if self.conf in cmdline(p)]
        for p in pids:
            os.kill(p, signal.SIGKILL)
        deadline = time.time() + 10
        while time.time() < deadline and any(os.path.exists("/proc/%d" % p) for p in pids):
            time.sleep(0.01)
        self.known += [p for p in pids if p not in self.known]
        self.pid, self.started = None, False
        os.unlink(os.path.join(self.dir, "httpd.pid"))

    def restart(self):
        self.mark()
        self.start()


def steady_writer(d, period, stop, closes, count):
    """C1's writer: a new file of 100 bytes d/cNNNNNN every `period` s on a
    fixed schedule, until stop is set (or closes is full); closes[i] is
    the time (monotonic ns) just before file i's close(2)."""
    child_signals()
    os.umask(0o022)
    mono = time.monotonic_ns
    start = mono()
    i = 0
    while not stop.is_set() and i < len(closes):
        wait = start + int(i * period * 1e9) - mono()
        if wait > 0:
            time.sleep(wait / 1e9)
        fd = os.open(os.path.join(d, "c%06d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, NEW_BODY)
        closes[i] = mono()
        os.close(fd)
        i += 1
        count.value = i


class ClusterBench(bench.Bench):
    # -- the cluster -----------------------------------------------------------
    def lease(self):
        """(holder, expires in µs since the epoch on the server's clock) of
        the set's lease, or (None, None)."""
        row = self.pg.query(self.db, "SELECT holder || ' ' || expires FROM leases "
                            "WHERE setname = '%s'" % SET)
        if not row:
            return None, None
        holder, expires = row.split()
        return holder, int(expires)

    def roles(self):
        """(leader, follower): the lease's holder and the other node."""
        holder, _ = self.lease()
        leader = [n for n in self.nodes if n.node == holder]
        if not leader:
            raise RuntimeError("no node holds the set's lease (%s)" % holder)
        return leader[0], [n for n in self.nodes if n is not leader[0]][0]

    def wait_follower(self, node, timeout=60):
        """Wait until node says the set is written by another node and the
        other node holds its lease."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if node.mode() == "written-by-another-node":
                holder, _ = self.lease()
                if holder and holder != node.node:
                    return
            if node.pid and not os.path.exists("/proc/%d" % node.pid):
                raise RuntimeError("%s died (see %s)" % (node.node, node.error_log))
            time.sleep(0.1)
        raise RuntimeError("%s is not a follower after %d s (mode %s; see %s)"
                           % (node.node, timeout, node.mode(), node.error_log))

    def same_docs(self, leader, follower, paths, timeout=60):
        """{path: (ETag, body)} once every path answers 200 on both nodes
        with the same bytes and ETag (the follower may lag); Unavailable
        with what they answered when that does not come within timeout."""
        pl, pf = Poller(leader.port), Poller(follower.port)
        deadline = time.time() + timeout
        try:
            while True:
                got, why = {}, []
                for path in paths:
                    sl, el, bl = pl.get(path)
                    sf, ef, bf = pf.get(path)
                    if sl == sf == 200 and el == ef and bl == bf:
                        got[path] = (el, bl)
                    else:
                        why.append("%s: the leader %d (%s, %d bytes), the follower %d (%s, "
                                   "%d bytes)" % (path, sl, el, len(bl), sf, ef, len(bf)))
                if not why:
                    return got
                if time.time() > deadline:
                    raise Unavailable("; ".join(why))
                time.sleep(0.2)
        finally:
            pl.close()
            pf.close()

    def follower_serves(self, what):
        """Whether the follower serves the leader's documents (asked once:
        the answer is kept in self.serving); if not, say why the figure
        `what` is not measured."""
        leader, follower = self.roles()
        if self.serving is None:
            try:
                self.same_docs(leader, follower, [INDEX, RLIST])
                self.serving = True
            except Unavailable as e:
                self.serving = False
                self.why = ("the follower (%s) does not serve the leader's (%s) documents "
                            "within 60 s: %s" % (follower.node, leader.node, e))
        if not self.serving:
            msg = "%s not measured: %s" % (what, self.why)
            log(msg)
            self.notes.append(msg if what == "C2" else "%s not measured (see C2)" % what)
        return self.serving

    def quiet_roles(self, what):
        """(leader, follower) once the leader's watcher is idle, or None
        when the follower does not serve (follower_serves)."""
        if not self.follower_serves(what):
            return None
        leader, follower = self.roles()
        wait_idle(leader.watcher(), timeout=self.scan_timeout())
        return leader, follower

    def loc(self, path):
        return (BASE + "/" + os.path.relpath(path, self.www)).encode()

    # -- C2: change -> served on both nodes ----------------------------------
    def c2(self, leader, follower):
        a = self.args
        changes = self.c2_plan
        locs = [self.loc(p) for p, _ in changes]
        iv = a.poll_interval / 1000.0
        log("C2: %d changes at %g/s; pollers on %s (leader) and %s (follower)"
            % (len(changes), a.rate, leader.node, follower.node))
        _, closes, walls, res = self.live_run_many(
            [(changelist_poller, (leader.port, INDEX, locs, iv)),
             (changelist_poller, (follower.port, INDEX, locs, iv))], changes, a.rate, 10)
        (seen_l, st_l), (seen_f, st_f) = res
        cl, cf, fl, jf, jl = [], [], [], [], []
        for loc, c, w in zip(locs, closes, walls):
            if loc in seen_l:
                cl.append((seen_l[loc][0] - c) / 1e6)
            if loc in seen_f:
                cf.append((seen_f[loc][0] - c) / 1e6)
                # the entry's datetime: when the leader journaled the change
                # (wall clock), on the monotonic clock of the close
                journaled = c + w3c_ns(seen_f[loc][1]) - w
                jf.append((seen_f[loc][0] - journaled) / 1e6)
                if loc in seen_l:
                    fl.append((seen_f[loc][0] - seen_l[loc][0]) / 1e6)
                    jl.append((seen_l[loc][0] - journaled) / 1e6)
        missing = "never seen: %d on the leader, %d on the follower, of %d" % (
            len(locs) - len(cl), len(locs) - len(cf), len(locs))
        if not cf or not cl:
            self.notes.append("C2: " + missing)
            return
        polls = "polls: %d on the leader (%d answered 200), %d on the follower (%d)" % (
            st_l["requests"], st_l["ok"], st_f["requests"], st_f["ok"])
        for q in (50, 99):
            self.result("C2", "close -> served, p%d: follower vs leader" % q, percentile(cf, q),
                        percentile(cl, q), "ms", "i", missing if q == 99 else "")
        for q in (50, 99):
            self.result("C2", "the leader journaled it (the entry's datetime) -> served, p%d: "
                        "follower vs leader" % q, percentile(jf, q), percentile(jl, q), "ms",
                        "c2" if q == 99 else "i", polls if q == 99 else "")
        for q in (50, 99):
            self.result("C2", "served by the follower - served by the leader, per change, p%d"
                        % q, percentile(fl, q), None, "ms", "i",
                        "range %s..%s" % (fmt_num(min(fl), "ms"), fmt_num(max(fl), "ms"))
                        if q == 99 else "")

    # -- C3: polls and part serving, follower vs leader ----------------------
    def wrk(self, url, etag, seconds):
        cmd = ["wrk", "-t1", "-c%d" % self.args.conns, "-d%ds" % seconds]
        if etag:
            cmd += ["-H", "If-None-Match: %s" % etag]
        cmd.append(url)
        self.note_cmd("C3: wrk", " ".join(shlex.quote(c) for c in cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=seconds + 60)
        return parse_wrk(r.stdout.decode(errors="replace"))

    def c3(self, leader, follower):
        a = self.args
        # the largest part (parts are cut at directories: sizes vary)
        p = Poller(leader.port)
        open_cl = p.open_list(INDEX)
        _, _, body = p.get(RLIST)
        part, size = RLIST, len(body)
        if b"<sitemapindex" in body[:2000]:
            size = 0
            for m in LOC_RX.finditer(body):
                q = urllib.parse.urlsplit(m.group(1).decode()).path
                n = len(p.get(q)[2])
                if n > size:
                    part, size = q, n
        p.close()
        try:
            docs = self.same_docs(leader, follower, [open_cl, RLIST, part])
        except Unavailable as e:
            self.notes.append("C3 not measured: the documents differ: %s" % e)
            return
        kinds = [("304 polls/s of the open Change List (%d entries)"
                  % docs[open_cl][1].count(b"<url>"), open_cl, True),
                 ("304 polls/s of resourcelist.xml", RLIST, True),
                 ("304 polls/s of the largest Resource List part (%d entries)"
                  % docs[part][1].count(b"<url>"), part, True),
                 ("200 GETs/s of the same part (%.0f kB)" % (len(docs[part][1]) / 1e3), part,
                  False)]
        seconds = max(1, round(a.duration / a.wrk_reps))
        rates = {(k, n.node): [] for k in range(len(kinds)) for n in (leader, follower)}
        errors = set()
        for i in range(a.wrk_reps):
            for k, (_, path, cond) in enumerate(kinds):
                for n in ((leader, follower) if (i + k) % 2 == 0 else (follower, leader)):
                    rate, _, errs = self.wrk(n.base + path, docs[path][0] if cond else None,
                                             seconds)
                    rates[k, n.node].append(rate)
                    errors.update(errs)
        after = self.same_docs(leader, follower, [open_cl, RLIST, part], timeout=5)
        changed = [q for q in after if after[q][0] != docs[q][0]]
        for k, (name, path, _) in enumerate(kinds):
            self.result("C3", "%s: follower vs leader" % name, rates[k, follower.node],
                        rates[k, leader.node], "req/s", "c3",
                        "wrk -t1 -c%d, %d runs of %d s per node, interleaved; the document "
                        "byte-identical on both nodes, ETag %s%s%s"
                        % (a.conns, a.wrk_reps, seconds, docs[path][0],
                           "; wrk: " + ", ".join(sorted(errors)) if errors and k == 0 else "",
                           "; CHANGED during the runs" if path in changed else ""))

    # -- C1: failover --------------------------------------------------------
    def await_served(self, node, after, timeout):
        """Poll node's open Change List every 20 ms, as a destination would
        (If-None-Match; a 200 read whole; a list closed, or any answer but
        200 and 304, sends it back to the index), until it lists a loc for
        which after(loc) holds.  (time, polls), time None on timeout."""
        mono = time.monotonic_ns
        p = Poller(node.port)
        deadline = mono() + int(timeout * 1e9)
        path, etag, polls = None, None, 0
        try:
            while mono() < deadline:
                tick = mono()
                polls += 1
                try:
                    if path is None:
                        st, _, body = p.get(INDEX)
                        path = open_path(body) if st == 200 else None
                        etag = None
                    else:
                        st, et, body = p.get(path, etag)
                        t = mono()
                        if st == 200:
                            if any(after(m.group(1)) for m in LOC_RX.finditer(body)):
                                return t, polls
                            first = body.find(b"<url>")
                            closed = b"until=" in (body if first < 0 else body[:first])
                            path, etag = (None, None) if closed else (path, et)
                        elif st != 304:
                            path, etag = None, None
                except OSError:
                    p.close()
                    path = None
                time.sleep(max(0, tick + FO_POLL * 1e9 - mono()) / 1e9)
            return None, polls
        finally:
            p.close()

    def failover_once(self, rep):
        a = self.args
        leader, survivor = self.roles()
        d = os.path.join(self.data, "cluster-fo", "r%d" % rep)
        os.makedirs(d)
        os.chmod(d, 0o755)
        ctx = multiprocessing.get_context("fork")
        stop, count = ctx.Event(), ctx.Value("q", 0)
        closes = ctx.Array("q", int((a.failover + 150) / FO_PERIOD), lock=False)
        writer = ctx.Process(target=steady_writer, args=(d, FO_PERIOD, stop, closes, count))
        self.procs.append(writer)
        writer.start()
        time.sleep(1.0)         # the leader journals the writer's files for a while
        survivor.mark()
        wall, t_kill = time.time(), time.monotonic_ns()
        leader.kill()
        t_gone = time.monotonic_ns()    # files closed from now on were never the dead node's
        holder, expires = self.lease()
        if holder != leader.node:
            raise RuntimeError("C1: the lease is %s's right after %s was killed"
                               % (holder, leader.node))
        prefix = self.loc(os.path.join(d, "c"))
        rx = re.compile(re.escape(prefix) + rb"(\d+)$")

        def after(loc):
            m = rx.match(loc)
            return bool(m) and (closes[int(m.group(1))] == 0
                                or closes[int(m.group(1))] > t_gone)
        served, polls = self.await_served(survivor, after, a.failover + 120)
        stop.set()
        writer.join(10)
        if served is None:
            raise RuntimeError("C1: %s served no new change within %g s of %s's death (see %s)"
                               % (survivor.node, a.failover + 120, leader.node,
                                  survivor.error_log))
        line = survivor.line_since(TAKES_OVER)
        r = {"total": (served - t_kill) / 1e6, "expiry": (expires / 1e3 - wall * 1e3),
             "take": (apache_time(line) - wall) * 1e3 if line else None, "polls": polls,
             "made": count.value}
        r["served"] = r["total"] - r["take"] if line else None
        log("C1 %d: %s killed; lease expiry +%.0f ms, %s takes over +%s ms, serves a new "
            "change +%.0f ms (%d polls)" % (rep, leader.node, r["expiry"], survivor.node,
                                            "%.0f" % r["take"] if line else "?", r["total"],
                                            polls))
        leader.restart()
        self.wait_follower(leader)
        if self.serving:
            try:
                self.same_docs(survivor, leader, [INDEX, RLIST])
            except Unavailable as e:
                self.notes.append("C1 %d: %s, started again, did not follow within 60 s: %s"
                                  % (rep, leader.node, e))
        return r

    def c1(self):
        a = self.args
        shutil.rmtree(os.path.join(self.data, "cluster-fo"), ignore_errors=True)
        os.makedirs(os.path.join(self.data, "cluster-fo"))
        os.chmod(os.path.join(self.data, "cluster-fo"), 0o755)
        runs = [self.failover_once(rep) for rep in range(a.reps)]
        fo = a.failover * 1e3
        total = [r["total"] for r in runs]
        desc = ("%d repetitions, nodes alternating; a new file every %d ms, the other node's "
                "open Change List polled every %d ms; ResourceSyncFailover %g s (the baseline "
                "column); ratio = latency / failover time"
                % (len(runs), FO_PERIOD * 1e3, FO_POLL * 1e3, a.failover))
        for what, v in (("p50", percentile(total, 50)), ("p99", percentile(total, 99)),
                        ("min", min(total)), ("max", max(total))):
            self.result("C1", "failover: the leader killed -> a new change served by the other "
                        "node, %s" % what, v, fo, "ms", "i", desc if what == "p50" else "")
        parts = [("kill -> the lease's expiry (its expires in the store)", "expiry"),
                 ("kill -> the new writer's \"takes it over\" log line", "take"),
                 ("\"takes it over\" -> the first new change served (reconciliation, "
                  "journal, poll)", "served")]
        for name, k in parts:
            v = [r[k] for r in runs if r[k] is not None]
            if v:
                self.result("C1", "%s, p50" % name, percentile(v, 50), fo, "ms", "i",
                            "p99 %s, range %s..%s" % (fmt_num(percentile(v, 99), "ms"),
                                                      fmt_num(min(v), "ms"),
                                                      fmt_num(max(v), "ms")))

    # -- the run ---------------------------------------------------------------
    def markdown(self, facts, started, elapsed):
        """bench.py's Markdown with this benchmark's heading and servers."""
        a = self.args
        conf = node_conf("host=127.0.0.1 port=P dbname=%s user=rs" % self.db, "node-a",
                         a.failover)
        servers = ("- Servers: two nodes, node-a (started first) and node-b, each httpd "
                   "prefork with %d children, LogLevel warn resourcesync:info, one set over "
                   "tree-%d/www/data (ResourceSyncHash md5, ResourceSyncMaxEntries %d, "
                   "ResourceSyncRescanInterval 86400); PostgreSQL a private cluster (t/pgcluster) "
                   "on the same machine over TCP with %s. C2: %g changes/s for %d s, every "
                   "other one the rewrite of an existing file; its pollers wait %g ms after a "
                   "poll that found nothing new. C3: wrk -t1 -c%d. Each node adds (node-b with "
                   "its own name):\n\n```\n%s```"
                   % (max(2, a.conns), self.n, a.cl_max, ", ".join(PG_SETTINGS), a.rate,
                      a.duration, a.poll_interval, a.conns, conf))
        lines = super().markdown(facts, started, elapsed).split("\n")
        lines[0] = "### %d files, %s" % (self.n, facts["date"])
        lines = [servers if line.startswith("- Servers:") else
                 "Commands:" if line.startswith("Commands (") else line for line in lines]
        return "\n".join(lines)

    def run(self):
        t0, facts, a = time.time(), self.machine(), self.args
        started = "bench/run --cluster " + " ".join(sys.argv[1:])
        self.figs = {"C1", "C2", "C3"}
        log("cluster: %d files, failover %g s, C1 %d repetitions, C2 %g changes/s for %d s, "
            "C3 %d connections, work dir %s" % (self.n, a.failover, a.reps, a.rate, a.duration,
                                                 a.conns, self.work))
        self.make_tree()
        for sub in ("cluster-c2", "cluster-fo"):
            shutil.rmtree(os.path.join(self.data, sub), ignore_errors=True)
        self.c2_plan = self.live_plan(self.www, "data", "cluster-c2", int(a.rate * a.duration),
                                      True)
        self.pg = PgCluster(os.path.join(self.work, "pg-cluster"), PG_SETTINGS)
        self.pg.start()
        self.db = "rs_cluster"
        self.serving = None     # whether the follower serves (follower_serves)
        dsn = self.pg.createdb(self.db)
        self.nodes = [Node(self, n, dsn) for n in NAMES]
        first, second = self.nodes
        for n in self.nodes:
            self.servers.append(n)
        first.start()
        first.first_lists(self.scan_timeout())
        log("%s: first scan %d files in %.3f s, list of %d entries in %d parts"
            % (first.node, first.scan_files, first.scan_time, first.entries, first.parts))
        second.start()
        self.wait_follower(second)
        for what, fig in (("C2", self.c2), ("C3", self.c3)):
            roles = self.quiet_roles(what)
            if roles:
                fig(*roles)
        self.c1()
        self.report("mod_resourcesync cluster benchmarks", "results-cluster", facts, started,
                    time.time() - t0)

    def scan_timeout(self):
        return 300 + self.n * 0.01      # as bench/store.py: PostgreSQL

    def cleanup(self):
        super().cleanup()
        for sub in ("cluster-c2", "cluster-fo"):
            shutil.rmtree(os.path.join(self.data, sub), ignore_errors=True)
        if getattr(self, "pg", None):
            self.pg.stop(remove=not self.args.keep)


def main():
    # bench.py's options (N, --reps, --duration, --conns, --wrk-reps,
    # --poll-interval, --cl-max, --md, --keep) with this benchmark's
    # defaults, and --rate, --failover.
    argv = sys.argv[1:]
    r = take_option(argv, "--rate", 20.0, number_in(1, 1000), "changes/s (1..1000)")
    fo = take_option(argv, "--failover", 2.0, number_in(2, 3600), "seconds (2..3600)")
    for name, default in (("--reps", "10"), ("--duration", "20"), ("--conns", "16"),
                          ("--wrk-reps", "4")):
        if name not in argv:
            argv += [name, default]
    sys.argv[1:] = argv

    class Runner(ClusterBench):
        def __init__(self, args):
            args.rate, args.failover = r, fo
            super().__init__(args)
    bench.Bench = Runner
    return bench.main()


if __name__ == "__main__":
    sys.exit(main())
