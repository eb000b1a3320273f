#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scale.py - metadata at scale (run it through bench/run --scale N).

A tree of N empty files (bench/make-tree --empty: the benchmark layout, only
metadata) and a second one of N/100 files (at least 1,000), each served by
a private httpd of its own (prefork, one child, ResourceSyncHash none,
ResourceSyncMaxEntries 50000, no periodic rescan), both running at once.
Measured, for both sizes:

  first scan        the watcher's "scanned N files ... in S s" line vs
                    find DIR -type f -printf '%s %T@ %p\\n' (figure 1's baseline)
  Resource List     time between the "scanned" and "published" log lines vs
                    find -printf writing the entries as XML (figure 3's baseline)
  store size        (state.db + state.db-wal) / files, as found after the
                    snapshot (the module has no checkpoint of its own)
  watcher memory    VmHWM and VmRSS of rs-watcher after the scan and snapshot
  child memory      VmHWM of the httpd child after serving the Resource List
                    (index), one part, the open Change List (200, then 304)
  change latency    close of a new file -> its entry in the open Change List,
                    p50 and p99 (figure 6's writer and poller)
  304 polls/s       of the open Change List with If-None-Match (wrk, as
                    figure 8)

Every "big vs small" ratio says whether the figure grows with the set size:
the scan, the list and the store should grow linearly (per-file figures flat),
everything per request should stay flat.
"""
import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import (SET, TOP, Poller, Server, log, parse_wrk,  # noqa: E402
                   proc_mem, vm_hwm)

LIVE = "live-scale"     # the directory of new files made by the latency run


class Scale(bench.Bench):
    def __init__(self, args):
        super().__init__(args)
        self.small_n = max(1000, self.n // 100)
        self.figs = set()
        self.trees = {}         # n -> data directory
        self.live_dirs = []

    @property
    def op_timeout(self):
        return 600 + self.n * 0.002

    def scan_timeout(self):
        # the module's first scan does an internal request per file: give it
        # a millisecond per file on top of ten minutes
        return 600 + self.n * 0.001

    # -- trees and baselines ---------------------------------------------------
    def make_empty_tree(self, n):
        top = os.path.join(self.work, "tree-empty-%d" % n)
        www = os.path.join(top, "www")
        data = os.path.join(www, "data")
        for d in (self.work, top, www):
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o755)
        live = os.path.join(data, LIVE)
        shutil.rmtree(live, ignore_errors=True)      # left by an interrupted run
        log("tree of %d empty files in %s" % (n, data))
        cmd = "umask 022; %s --empty %d %s" % (os.path.join(TOP, "bench", "make-tree"), n, data)
        self.note_cmd("make the tree", cmd)
        t0 = time.time()
        subprocess.run(["sh", "-c", cmd], check=True, timeout=600 + n * 0.001)
        if time.time() - t0 > 5:
            self.notes.append("tree of %d empty files made in %.0f s (bench/make-tree --empty)"
                              % (n, time.time() - t0))
        self.trees[n] = data
        return data

    def baselines(self, n, data):
        """(find -printf time, find as XML time, XML bytes), after a warm-up."""
        find = "find %s -type f -printf '%%s %%T@ %%p\\n' > /dev/null" % data
        log("%d: warming the inode cache (find)" % n)
        self.timed("warm the inode cache", find, self.op_timeout)
        out = os.path.join(self.scratch, "find-list-%d.xml" % n)
        fmt = ("<url><loc>http://127.0.0.1/data/%P</loc><lastmod>%TY-%Tm-%TdT%TH:%TM:%TSZ"
               "</lastmod><rs:md length=\"%s\"/></url>\\n")
        xml = "find %s -type f -printf '%s' > %s" % (data, fmt, out)
        t_find, t_xml = [], []
        for _ in range(self.args.reps):
            t_find.append(self.timed("baseline: find -printf", find, self.op_timeout))
            t_xml.append(self.timed("baseline: find as XML", xml, self.op_timeout))
        size = os.path.getsize(out)
        os.unlink(out)
        return statistics.median(t_find), statistics.median(t_xml), size

    # -- servers -----------------------------------------------------------------
    def start(self, n, data):
        www = os.path.dirname(data)
        srv = Server(self, "scale-%d" % n, www, data, "none", 1)
        # The XML baseline, just before, left dirty pages behind.
        log("%d: sync before the first scan" % n)
        self.timed("write back the baselines' pages", "sync", self.op_timeout)
        self.servers.append(srv)
        srv.start()
        log("%d: first scan running (timeout %d s)" % (n, self.scan_timeout()))
        srv.first_lists(self.scan_timeout())
        srv.n = n
        srv.data = data
        srv.watcher_mem = proc_mem(srv.watcher() or 0)
        srv.store = self.store_size(srv)
        srv.index = "/resourcesync/%s/changelist.xml" % SET
        log("%d: scanned %d files in %.1f s, list of %d entries in %d parts %.1f s later; "
            "watcher %s" % (n, srv.scan_files, srv.scan_time, srv.entries, srv.parts,
                            srv.publish_time, srv.watcher_mem))
        if srv.scan_files != n or srv.entries != n:
            self.notes.append("%d: the first scan counted %d files and the list has %d "
                              "entries" % (n, srv.scan_files, srv.entries))
        return srv

    def store_size(self, srv):
        """{state.db, state.db-wal, other}: bytes in the state directory."""
        out = {"state.db": 0, "state.db-wal": 0, "other": 0}
        for root, _, files in os.walk(os.path.join(srv.dir, "state")):
            for f in files:
                try:
                    size = os.lstat(os.path.join(root, f)).st_size
                except OSError:
                    continue
                out[f if f in out else "other"] += size
        return out

    def child_hwm(self, srv):
        return max(vm_hwm(p) or 0 for p in srv.workers())

    def serve_lists(self, srv):
        """Child VmHWM: idle, after the Resource List (index), after one part
        (EnableSendfile On, so that no file pages are mapped into the child)."""
        p = Poller(srv.port)
        rss = {"idle": self.child_hwm(srv)}
        st, _, body = p.get("/resourcesync/%s/resourcelist.xml?sendfile" % SET)
        if st != 200:
            raise RuntimeError("%d: the Resource List answered %d" % (srv.n, st))
        rss["index"] = self.child_hwm(srv)
        srv.list_bytes = len(body)
        if b"<sitemapindex" in body[:1000]:
            loc = bench.LOC_RX.search(body)
            part = urllib.parse.urlsplit(loc.group(1).decode()).path
            st, _, pbody = p.get(part + "?sendfile")
            if st != 200:
                raise RuntimeError("%d: %s answered %d" % (srv.n, part, st))
            srv.part_bytes = len(pbody)
            srv.part_entries = pbody.count(b"</url>")
        else:
            srv.part_bytes, srv.part_entries = len(body), body.count(b"</url>")
        rss["part"] = self.child_hwm(srv)
        p.close()
        srv.rss = rss

    def latency(self, srv):
        """Figure 6's writer and Change List poller: new empty-tree-sized
        files in a new directory of the set, at --rate changes/s."""
        a = self.args
        live = os.path.join(srv.data, LIVE)
        shutil.rmtree(live, ignore_errors=True)
        os.makedirs(live)
        os.chmod(live, 0o755)
        self.live_dirs.append(live)
        changes = [(os.path.join(live, "c%06d" % i), "c") for i in range(a.changes)]
        log("%d: %d changes at %d/s" % (srv.n, a.changes, a.rate))
        s = self.live_changelist(srv, os.path.dirname(srv.data), changes, a.rate)
        srv.lat = s

    def open_list(self, srv):
        """Child VmHWM after the open Change List (200, then 304); returns
        (URL, ETag, entries)."""
        p = Poller(srv.port)
        path = p.open_list(srv.index)
        st, etag, body = p.get(path)
        srv.rss["open 200"] = self.child_hwm(srv)
        st2, _, _ = p.get(path, etag)
        srv.rss["open 304"] = self.child_hwm(srv)
        p.close()
        if st != 200 or st2 != 304 or not etag:
            raise RuntimeError("%d: %s answered %d, then %d with If-None-Match %s"
                               % (srv.n, path, st, st2, etag))
        srv.open = (srv.base + path, etag, body.count(b"</url>"))

    def polls(self, big, small):
        """304 polls/s of each open Change List, wrk runs interleaved."""
        a = self.args
        rates = {big.n: [], small.n: []}
        errors = set()
        for i in range(a.wrk_reps):
            for srv in ((big, small) if i % 2 == 0 else (small, big)):
                url, etag, _ = srv.open
                cmd = ["wrk", "-t1", "-c1", "-d%ds" % a.duration,
                       "-H", "If-None-Match: %s" % etag, url]
                self.note_cmd("304 polls", " ".join(shlex.quote(c) for c in cmd))
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=a.duration + 60)
                rate, _, errs = parse_wrk(r.stdout.decode(errors="replace"))
                rates[srv.n].append(rate)
                errors.update(errs)
        for srv in (big, small):
            p = Poller(srv.port)
            st, _, _ = p.get(urllib.parse.urlsplit(srv.open[0]).path, srv.open[1])
            p.close()
            if st != 304:
                errors.add("%d: the open list no longer answers 304 after the runs (%d)"
                           % (srv.n, st))
            srv.rss["after wrk"] = self.child_hwm(srv)
        return rates, errors

    # -- the run ---------------------------------------------------------------
    def run(self):
        a = self.args
        started = "bench/run --scale " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("scale: %d and %d empty files, work dir %s" % (self.n, self.small_n, self.work))
        os.makedirs(self.scratch, exist_ok=True)
        base, srvs = {}, {}
        # Each tree's baselines right before its own first scan: walking
        # the other tree in between changes the state of the kernel's
        # caches (10^7 cached dentries make every lookup slower).
        for n in (self.small_n, self.n):
            data = self.make_empty_tree(n)
            base[n] = self.baselines(n, data)
            srvs[n] = self.start(n, data)
        small, big = srvs[self.small_n], srvs[self.n]
        for srv in (small, big):
            self.serve_lists(srv)
        for srv in (small, big):
            self.latency(srv)
            self.open_list(srv)
        rates, errors = self.polls(big, small)
        for srv in (small, big):
            self.live_log_notes(srv, "scale %d" % srv.n)
        self.results_of(big, small, base, rates, errors)
        self.report("mod_resourcesync at scale", "results-scale", facts, started,
                    time.time() - t0)
        if a.remove_tree:
            for n in (self.n, self.small_n):
                shutil.rmtree(os.path.dirname(os.path.dirname(self.trees[n])),
                              ignore_errors=True)

    def results_of(self, big, small, base, rates, errors):
        r = self.result
        for srv in (big, small):
            f, x, xml = base[srv.n]
            r("scan", "first scan, %d files: module vs find -printf" % srv.n, srv.scan_time,
              f, "s", "1m", "%.1f us per file; find %.1f us per file"
              % (srv.scan_time / srv.n * 1e6, f / srv.n * 1e6))
        for srv in (big, small):
            f, x, xml = base[srv.n]
            r("list", "Resource List after the first scan, %d entries in %d parts: module "
              "(scanned -> published) vs find as XML" % (srv.entries, srv.parts),
              srv.publish_time, x, "s", "3", "%.1f us per entry; find writes one %.1f MB file"
              % (srv.publish_time / srv.n * 1e6, xml / 1e6))
        r("scan", "first scan per file: %d vs %d files" % (big.n, small.n),
          big.scan_time / big.n * 1e6, small.scan_time / small.n * 1e6, "us", "i",
          "linear in the set size when the ratio is about 1")
        r("list", "Resource List per entry: %d vs %d entries" % (big.n, small.n),
          big.publish_time / big.n * 1e6, small.publish_time / small.n * 1e6, "us", "i",
          "the small list's time is one log-timestamp difference, coarse at small sizes")
        per = [(s.store["state.db"] + s.store["state.db-wal"]) / s.n for s in (big, small)]
        r("store", "state store per entry (state.db + -wal), %d vs %d files" % (big.n, small.n),
          per[0], per[1], "B/entry", "i",
          "as found after the snapshot (no checkpoint: the module exposes none); %d: state.db "
          "%.1f MB, -wal %.1f MB, other files in the state dir (the published lists) %.1f MB; "
          "%d: state.db %.1f MB, -wal %.1f MB"
          % (big.n, big.store["state.db"] / 1e6, big.store["state.db-wal"] / 1e6,
             big.store["other"] / 1e6, small.n, small.store["state.db"] / 1e6,
             small.store["state.db-wal"] / 1e6))
        for k in ("VmHWM", "VmRSS"):
            wb, ws = big.watcher_mem.get(k), small.watcher_mem.get(k)
            r("watcher", "watcher %s after the first scan and snapshot, %d vs %d files"
              % (k, big.n, small.n), wb, ws, "kB", "i",
              "rs-watcher: RssAnon %s / %s kB, RssFile %s / %s kB"
              % (big.watcher_mem.get("RssAnon"), small.watcher_mem.get("RssAnon"),
                 big.watcher_mem.get("RssFile"), small.watcher_mem.get("RssFile"))
              if k == "VmHWM" else "")
        steps = [("index", "the Resource List (index of %d / %d parts)" % (big.parts, small.parts)),
                 ("part", "one part (%d / %d entries)" % (big.part_entries, small.part_entries)),
                 ("open 200", "the open Change List (200; %d / %d entries)"
                  % (big.open[2], small.open[2])),
                 ("open 304", "the open Change List again (304)"),
                 ("after wrk", "the 304 poll runs")]
        for k, what in steps:
            r("child", "httpd child VmHWM after %s, %d vs %d files" % (what, big.n, small.n),
              big.rss[k], small.rss[k], "kB", "5",
              "idle child %d / %d kB; parts fetched with EnableSendfile On (no file pages "
              "mapped); Resource List %d / %d bytes, part %d / %d bytes"
              % (big.rss["idle"], small.rss["idle"], big.list_bytes, small.list_bytes,
                 big.part_bytes, small.part_bytes) if k == "index" else "")
        for q in ("p50", "p99"):
            r("latency", "close of a new file -> its entry in the open Change List, %s, %d/s, "
              "%d vs %d files" % (q, self.args.rate, big.n, small.n), big.lat[q], small.lat[q],
              "ms", "i",
              "%d: %s. %d: %s" % (big.n, self.live_desc(big.lat), small.n,
                                  self.live_desc(small.lat)) if q == "p99" else "")
        r("polls", "304 polls/s of the open Change List, %d vs %d files" % (big.n, small.n),
          rates[big.n], rates[small.n], "req/s", "i",
          "wrk -t1 -c1 -H 'If-None-Match: <ETag>', %d interleaved runs of %d s each%s"
          % (self.args.wrk_reps, self.args.duration,
             "; wrk: " + ", ".join(sorted(errors)) if errors else ""))

    def table(self):
        """bench.Bench's rows, in the order measured (not sorted)."""
        rows = [("figure", "what", "ours", "baseline", "ratio", "target", "met")]
        for r in self.results:
            rows.append((r["fig"], r["name"], bench.fmt_num(r["ours"], r["unit"]),
                         bench.fmt_num(r["base"], r["unit"]),
                         "-" if r["ratio"] is None else "%.2f" % r["ratio"], r["target"],
                         "-" if r["ok"] is None else ("yes" if r["ok"] else "NO")))
        return rows

    def markdown(self, facts, started, elapsed):
        rows = self.table()
        out = ["### metadata at scale: %d vs %d empty files, %s" % (self.n, self.small_n,
                                                                      facts["date"]), ""]
        out.append("Machine: %s CPUs (%s), kernel %s, %s RAM; %s; module at %s. "
                   "Load average at start %s, at end %.2f %.2f %.2f. Total run time %.0f s."
                   % (facts["nproc"], facts["cpu"], facts["kernel"], facts["memory"],
                      facts["httpd"], facts["commit"], facts["load"], *os.getloadavg(), elapsed))
        out += ["", "Command: `%s`" % started, ""]
        out.append("| " + " | ".join(rows[0]) + " |")
        out.append("|" + "|".join(["---"] * len(rows[0])) + "|")
        for row in rows[1:]:
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
        out += ["", "Notes:"]
        for res in self.results:
            if res["note"]:
                out.append("- %s %s: %s" % (res["fig"], res["name"], res["note"]))
        for n in self.notes:
            out.append("- " + n)
        out.append("- Servers: one per tree, both running during the measurements; httpd "
                   "prefork with 1 child, KeepAlive On, LogLevel warn resourcesync:info, "
                   "ResourceSyncHash none, ResourceSyncMaxEntries %d, "
                   "ResourceSyncRescanInterval 86400. Baselines: %d run(s) each after a "
                   "warm-up find; the module's first scan follows them (warm inode cache)."
                   % (bench.MAX_ENTRIES, self.args.reps))
        out += ["", "Commands:", "", "```"]
        for what, cmd in self.commands:
            out.append("# %s\n%s" % (what, cmd))
        out.append("```")
        return "\n".join(out) + "\n"

    def cleanup(self):
        super().cleanup()
        for d in self.live_dirs:
            shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(prog="bench/run --scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=int, help="empty files in the big tree (the small one has "
                    "a hundredth, at least 1,000)")
    ap.add_argument("--reps", type=int, default=1,
                    help="runs of each find baseline (default 1)")
    ap.add_argument("--changes", type=int, default=300,
                    help="new files of the latency run per server (default 300)")
    ap.add_argument("--rate", type=int, default=100,
                    help="changes/s of the latency run (default 100)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (default 5)")
    ap.add_argument("--wrk-reps", type=int, default=3,
                    help="wrk runs per server, interleaved (default 3)")
    ap.add_argument("--poll-interval", type=float, default=1.0,
                    help="ms the latency poller waits after a poll that found nothing new")
    ap.add_argument("--md", help="also write the Markdown results to this file")
    ap.add_argument("--keep", action="store_true", help="keep the servers' directories")
    ap.add_argument("--remove-tree", action="store_true", help="delete both trees at the end")
    a = ap.parse_args()
    if not (10000 <= a.files <= 15000000):
        ap.error("files: 10000 .. 15000000 (mind the free inodes: df -i)")
    if not (1 <= a.reps <= 10 and 10 <= a.changes <= 100000 and 1 <= a.rate <= 10000
            and 1 <= a.duration <= 600 and 1 <= a.wrk_reps <= 20
            and 0 <= a.poll_interval <= 1000):
        ap.error("reps 1..10, changes 10..100000, rate 1..10000, duration 1..600, "
                 "wrk-reps 1..20, poll-interval 0..1000")
    # what bench.Bench expects of its arguments
    a.conns, a.cl_max, a.quick = 1, bench.MAX_ENTRIES, False
    return bench.run_guarded(Scale(a))


if __name__ == "__main__":
    sys.exit(main())
