#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""store.py - the PostgreSQL state store against SQLite (run it through
`bench/run --store`).

The same scenario on the same tree, interleaved (--reps), with the state
store in SQLite (state.db in the state directory: the baseline) and in
PostgreSQL (`ResourceSyncStore pgsql "DSN"`, a database of its own per run
on a private cluster the benchmark starts with t/pgcluster):

  P1 first scan                  the watcher's "scanned" log line
                                 (ResourceSyncHash --hash, default md5)
  P2 writing the Resource List   the "scanned" -> "published" log lines
  P3 journal throughput          a burst of --burst new files (default 2000)
                                 in one directory, written as fast as
                                 possible: from the first close to the last
                                 one's entry in the open Change List
                                 (figure 6's poller), in changes/s
  P4 change latency              close of a file -> its entry in the open
                                 Change List, p50 and p99, at --rate
                                 changes/s for --live-duration s (figure 6's
                                 writer and poller; every other change the
                                 rewrite of an existing file)
  P5 the watcher's peak RSS      VmHWM of rs-watcher after P4

Each server is a private httpd (prefork, 2 children) whose one set is the
generated tree (tree-N/www/data).  The changes of P3 and P4 are made in
data/store-burst and data/store-live, made before the server starts (so
both stores scan the same files) and removed after each run.  Each run is
checked to have used its store: the SQLite run's state.db holds the set's
inventory and journal; the PostgreSQL run wrote no state.db and its
database holds them.  The cluster runs with --pg-settings (default
fsync=on, synchronous_commit=off: the durability of SQLite's WAL with
synchronous=NORMAL, as the module opens it: commits are not flushed one by
one, a crash of the machine may lose the last ones, never corrupts).
Results go to $RS_BENCH_DIR/results-store-N.md.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import SET, TOP, log, vm_hwm, wait_idle  # noqa: E402

bench.TARGETS.update({
    "s": None,            # PostgreSQL vs SQLite: informational (the issue sets no target)
})
PGCLUSTER = os.path.join(TOP, "t", "pgcluster")
STORES = ("sqlite", "pgsql")
# The cluster's server settings unless --pg-settings says otherwise: commits
# not flushed one by one (SQLite's WAL with synchronous=NORMAL, as the module
# opens it)
PG_SETTINGS = ["fsync=on", "synchronous_commit=off"]


class PgCluster:
    """A private PostgreSQL cluster in DIR (t/pgcluster), one database per
    run.  Lifecycle: start() once, createdb()/dropdb() around each run,
    stop() in the harness's cleanup (bench/run stops it too if the harness
    is killed)."""

    def __init__(self, path, settings):
        self.dir = path
        self.settings = settings
        self.port = None
        self.started = False

    def start(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        opts = " ".join("-c %s" % s for s in self.settings)
        env = dict(os.environ, PGCLUSTER_OPTS=opts)
        self.started = True
        r = subprocess.run([PGCLUSTER, "start", self.dir], env=env, timeout=120,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("t/pgcluster start %s failed: %s"
                               % (self.dir, r.stderr.decode(errors="replace")))
        m = re.search(rb"port=(\d+)", r.stdout)
        if not m:
            raise RuntimeError("t/pgcluster printed no DSN: %r" % r.stdout)
        self.port = int(m.group(1))
        for s in self.settings:
            name, value = s.split("=", 1)
            got = self.query("postgres", "SHOW %s" % name)
            if got != value:
                raise RuntimeError("the cluster runs with %s=%s, not %s" % (name, got, value))
        log("PostgreSQL cluster in %s on port %d (%s)" % (self.dir, self.port,
                                                          ", ".join(self.settings)))

    def query(self, db, sql):
        """One statement as the superuser over TCP; its output (one value)."""
        r = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                            "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                            "-d", db, "-c", sql], timeout=300,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("psql %s: %s: %s" % (db, sql, r.stderr.decode(errors="replace")))
        return r.stdout.decode().strip()

    def createdb(self, name):
        """A fresh database owned by the module's role, as OPERATIONS.md
        asks (SQL_ASCII, the C locale); returns its DSN."""
        self.query("postgres", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)
        self.query("postgres", "CREATE DATABASE %s OWNER rs TEMPLATE template0 ENCODING "
                   "'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'" % name)
        return "host=127.0.0.1 port=%d dbname=%s user=rs" % (self.port, name)

    def dropdb(self, name):
        self.query("postgres", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)

    def stop(self, remove=False):
        """Stop the cluster (if it was started); with remove, delete its directory."""
        if self.started:
            self.started = False
            subprocess.run([PGCLUSTER, "stop", self.dir], timeout=120)
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)


def sqlite_counts(db):
    """(inventory rows, journal records) of the set in state.db, read-only."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        return tuple(con.execute("SELECT count(*) FROM %s WHERE setname = ?" % t,
                                 (SET,)).fetchone()[0] for t in ("inventory", "journal"))
    finally:
        con.close()


class StoreBench(bench.Bench):
    def store_dirs(self, n_live):
        """data/store-burst (empty: P3's new files) and data/store-live (P4's
        rewrites made now, its new files later): (burst, live) plans."""
        for d in ("store-burst", "store-live"):
            shutil.rmtree(os.path.join(self.data, d), ignore_errors=True)
        burst = self.live_plan(self.www, "data", "store-burst", self.args.burst, False)
        live = self.live_plan(self.www, "data", "store-live", n_live, True)
        return burst, live

    def check_store(self, srv, store, dbname, r):
        """Fail loudly unless the run used the store it says: the set's
        inventory (at least the scanned files) and journal (at least the
        changes seen) are in that store, and a PostgreSQL run left no
        state.db."""
        state = os.path.join(srv.dir, "state")
        dbs = [os.path.join(d, f) for d, _, fs in os.walk(state) for f in fs
               if f.startswith("state.db")]
        db = os.path.join(state, "state.db")
        if store == "sqlite":
            if not os.path.isfile(db):
                raise RuntimeError("%s: SQLite run without %s" % (srv.dir, db))
            inv, jrn = sqlite_counts(db)
            r["bytes"] = sum(os.path.getsize(f) for f in dbs)
        else:
            if dbs:
                raise RuntimeError("%s: the PostgreSQL run wrote %s" % (srv.dir, ", ".join(dbs)))
            q = "SELECT count(*) FROM %s WHERE setname = '" + SET + "'"
            inv = int(self.pg.query(dbname, q % "inventory"))
            jrn = int(self.pg.query(dbname, q % "journal"))
            r["bytes"] = int(self.pg.query(dbname, "SELECT pg_database_size(current_database())"))
        if inv < r["files"] or jrn < r["seen"]:
            raise RuntimeError("%s: the %s store holds %d inventory rows and %d journal records "
                               "(scanned %d files, %d changes seen): not this run's store"
                               % (srv.dir, store, inv, jrn, r["files"], r["seen"]))
        r["inv"], r["jrn"] = inv, jrn
        log("%s store: %d inventory rows, %d journal records, %.1f MB"
            % (store, inv, jrn, r["bytes"] / 1e6))

    def one_run(self, store, rep):
        """A server on the tree with the store: P1..P5."""
        a = self.args
        name = "store-%s-%d" % (store, rep)
        burst, live = self.store_dirs(int(a.rate * a.live_duration))
        dbname, extra = None, ""
        if store == "pgsql":
            dbname = "rs_bench_%d" % rep
            extra = 'ResourceSyncStore pgsql "%s"\n' % self.pg.createdb(dbname)
        srv = bench.Server(self, name, self.www, self.data, a.hash, max(2, a.conns), a.cl_max,
                           server_extra=extra)
        self.servers.append(srv)
        srv.start()
        srv.first_lists(self.scan_timeout())
        r = {"scan": srv.scan_time, "files": srv.scan_files, "entries": srv.entries,
             "list": srv.publish_time}
        srv.index = "/resourcesync/%s/changelist.xml" % SET
        wait_idle(srv.watcher(), timeout=self.scan_timeout())
        s = self.live_changelist(srv, self.www, burst, 0, grace=60)
        r["burst"] = (s["n"] - s["missing"]) / s["drain_close"] if s["drain_close"] else 0
        r.update(b_drain=s["drain_close"], b_missing=s["missing"], b_writer=s["writer_rate"])
        log("%s: P3 %s" % (name, self.live_desc(s)))
        seen = s["n"] - s["missing"]
        wait_idle(srv.watcher(), timeout=self.scan_timeout())
        s = self.live_changelist(srv, self.www, live, a.rate)
        r.update(p50=s["p50"], p99=s["p99"], missing=s["missing"], n=s["n"],
                 w50=s["obs_p50"], w99=s["obs_p99"])
        log("%s: P4 %s" % (name, self.live_desc(s)))
        r["seen"] = seen + s["n"] - s["missing"]
        r["hwm"] = vm_hwm(srv.watcher())
        self.live_log_notes(srv, "P3/P4 (%s)" % name)
        self.check_store(srv, store, dbname, r)
        self.stop_server(srv)
        if dbname and not a.keep:
            self.pg.dropdb(dbname)
        for d in ("store-burst", "store-live"):
            shutil.rmtree(os.path.join(self.data, d), ignore_errors=True)
        log("%s: scan %.3f s, list %.3f s, burst %.0f/s, latency p50 %s / p99 %s ms, "
            "watcher %s kB" % (name, r["scan"], r["list"], r["burst"], r["p50"], r["p99"],
                               r["hwm"]))
        return r

    def scan_timeout(self):
        # PostgreSQL may be several times slower than SQLite at 10^6 files:
        # 5 min + 10 ms per file
        return 300 + self.n * 0.01

    def markdown(self, facts, started, elapsed):
        """bench.py's Markdown with this benchmark's heading and servers."""
        a = self.args
        servers = ("- Servers: httpd prefork with %d children, LogLevel warn resourcesync:info, "
                   "one set over tree-%d/www/data with ResourceSyncHash %s, "
                   "ResourceSyncMaxEntries %d, ResourceSyncRescanInterval 86400; the PostgreSQL "
                   "runs add `ResourceSyncStore pgsql \"host=127.0.0.1 port=P dbname=rs_bench_R "
                   "user=rs\"`, a fresh database per run on a private cluster (t/pgcluster, "
                   "PostgreSQL on the same machine over TCP, %s); the SQLite runs keep state.db "
                   "in the state directory (WAL, synchronous=NORMAL). P3: %d new files of 100 "
                   "bytes in one directory, written as fast as possible; P4: %g changes/s for "
                   "%g s, every other one the rewrite of an existing file (100 -> 150 bytes); "
                   "the poller waits %g ms after a poll that found nothing new. P5 is the "
                   "watcher's own memory (the PostgreSQL server's processes are not counted)."
                   % (max(2, a.conns), self.n, a.hash, a.cl_max, ", ".join(self.pg.settings),
                      a.burst, a.rate, a.live_duration, a.poll_interval))
        lines = super().markdown(facts, started, elapsed).split("\n")
        lines[0] = "### %d files, %s" % (self.n, facts["date"])
        lines = [servers if line.startswith("- Servers:") else
                 "Commands (medians of %d interleaved repetitions):" % a.reps
                 if line.startswith("Commands (") else line for line in lines]
        return "\n".join(lines)

    def run(self):
        a = self.args
        a.figures = "P1,P2,P3,P4,P5"
        self.figs = set(a.figures.split(","))
        started = "bench/run --store " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("store: %d files, reps %d, burst %d, %g changes/s for %g s, work dir %s"
            % (self.n, a.reps, a.burst, a.rate, a.live_duration, self.work))
        self.make_tree()
        self.pg = PgCluster(os.path.join(self.work, "pg-store"), a.pg_settings)
        self.pg.start()
        self.note_cmd("the PostgreSQL cluster", "PGCLUSTER_OPTS='%s' t/pgcluster start %s"
                      % (" ".join("-c " + s for s in a.pg_settings), self.pg.dir))
        runs = {s: [] for s in STORES}
        for rep in range(a.reps):
            for store in (STORES if rep % 2 == 0 else STORES[::-1]):
                runs[store].append(self.one_run(store, rep))
        pg, lite = runs["pgsql"], runs["sqlite"]
        col = lambda rs, k: [r[k] for r in rs if r[k] is not None]
        vs = "PostgreSQL vs SQLite"
        self.result("P1", "first scan, %s, %d files (%d of the tree, %d of P4): %s"
                    % (a.hash, pg[0]["files"], self.n, pg[0]["files"] - self.n, vs),
                    col(pg, "scan"), col(lite, "scan"), "s", "s", "the watcher's scanned line")
        self.result("P2", "Resource List after the first scan (%d entries): %s"
                    % (pg[0]["entries"], vs), col(pg, "list"), col(lite, "list"), "s", "s",
                    "scanned -> published log lines, ResourceSyncMaxEntries %d" % a.cl_max)
        self.result("P3", "burst of %d new files, first close -> last entry listed: %s"
                    % (a.burst, vs), col(pg, "burst"), col(lite, "burst"), "/s", "s",
                    "drained in %s s (PostgreSQL) and %s s (SQLite); the writer reached "
                    "%.0f/s and %.0f/s; never seen: %d and %d"
                    % ("/".join("%.3f" % r["b_drain"] for r in pg if r["b_drain"]),
                       "/".join("%.3f" % r["b_drain"] for r in lite if r["b_drain"]),
                       max(col(pg, "b_writer")), max(col(lite, "b_writer")),
                       sum(col(pg, "b_missing")), sum(col(lite, "b_missing"))))
        for q in ("p50", "p99"):
            self.result("P4", "latency close -> entry in the open Change List, %s, %g changes/s: "
                        "%s" % (q, a.rate, vs), col(pg, q), col(lite, q), "ms", "s",
                        "%d changes per run; never seen: %d (PostgreSQL), %d (SQLite)"
                        % (pg[0]["n"], sum(col(pg, "missing")), sum(col(lite, "missing")))
                        if q == "p99" else "")
        # close -> the entry's datetime is the watcher's part (noticed, hashed,
        # journaled in the store): where a slower store shows first.
        for q in ("50", "99"):
            self.result("P4", "latency close -> the entry's datetime (the watcher's part), "
                        "p%s: %s" % (q, vs), col(pg, "w" + q), col(lite, "w" + q), "ms", "s")
        self.result("P5", "watcher peak RSS after scan, list, burst and changes: %s" % vs,
                    col(pg, "hwm"), col(lite, "hwm"), "kB", "s", "rs-watcher VmHWM")
        self.notes.append("each run's store checked: inventory rows %s (PostgreSQL), %s "
                          "(SQLite); journal records %s and %s; store size %s MB "
                          "(pg_database_size) and %s MB (state.db, -wal, -shm); no state.db "
                          "in the PostgreSQL runs' state directories"
                          % ("/".join(str(r["inv"]) for r in pg),
                             "/".join(str(r["inv"]) for r in lite),
                             "/".join(str(r["jrn"]) for r in pg),
                             "/".join(str(r["jrn"]) for r in lite),
                             "/".join("%.1f" % (r["bytes"] / 1e6) for r in pg),
                             "/".join("%.1f" % (r["bytes"] / 1e6) for r in lite)))
        self.report("mod_resourcesync state store benchmarks", "results-store", facts, started,
                    time.time() - t0)
        if a.remove_tree:
            shutil.rmtree(self.tree_top, ignore_errors=True)
            try:
                os.unlink(self.data + ".complete")
            except OSError:
                pass

    def cleanup(self):
        super().cleanup()
        if getattr(self, "pg", None):
            self.pg.stop(remove=not self.args.keep)


def take_option(argv, name, default, check, what):
    """Remove `name VALUE` from argv; the checked value (or default)."""
    if name not in argv:
        return default
    i = argv.index(name)
    try:
        v = check(argv[i + 1])
    except (IndexError, ValueError):
        raise SystemExit("bench/run: %s needs %s" % (name, what))
    del argv[i:i + 2]
    return v


def number_in(lo, hi):
    """A checker for take_option: a number from lo to hi."""
    def check(v):
        v = float(v)
        if not lo <= v <= hi:
            raise ValueError(v)
        return v
    return check


def main():
    # bench.py's options (N, --quick, --reps, --live-duration, --burst,
    # --cl-max, --conns, --md, --keep, --remove-tree, --poll-interval) and
    # --rate, --hash, --pg-settings.
    argv = sys.argv[1:]

    def hashes(v):
        if not re.fullmatch(r"none|(md5|sha-1|sha-256|sha-512)( (md5|sha-1|sha-256|sha-512))*",
                            v):
            raise ValueError(v)
        return v

    def settings(v):
        out = [s.strip() for s in v.split(",") if s.strip()]
        if not all(re.fullmatch(r"[a-z_]+=[A-Za-z0-9_.]+", s) for s in out):
            raise ValueError(v)
        return out
    r = take_option(argv, "--rate", 1000.0, number_in(1, 10000), "changes/s (1..10000)")
    h = take_option(argv, "--hash", "md5", hashes, "ResourceSyncHash's value (e.g. md5 or none)")
    pgs = take_option(argv, "--pg-settings", PG_SETTINGS, settings,
                      "a list of name=value (e.g. fsync=on,synchronous_commit=off)")
    flags = ("--quick", "--keep", "--remove-tree")     # bench.py's options without a value
    if not any(x.isdigit() and (i == 0 or argv[i - 1] in flags or argv[i - 1].isdigit()
                                or not argv[i - 1].startswith("--"))
               for i, x in enumerate(argv)) and "--quick" not in argv:
        argv.insert(0, "100000")          # by default 10^5 files; the integrator chooses N
    if "--burst" not in argv:
        argv += ["--burst", "2000"]
    sys.argv[1:] = argv

    class Runner(StoreBench):
        def __init__(self, args):
            args.rate, args.hash, args.pg_settings = r, h, pgs
            super().__init__(args)
    bench.Bench = Runner
    return bench.main()


if __name__ == "__main__":
    sys.exit(main())
