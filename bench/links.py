#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""links.py - what rs:ln relations cost (run it through `bench/run --links`).

The same scenario twice in one run, on the same tree, interleaved (--reps):
a set without links (the baseline), and the same set with one describedby
rule and one mirror (issue 26: within 10 % on every figure):

    ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml if-exists
    ResourceSyncMirror https://mirror.example.org/bench/ pri=1

  L1 first scan                  the watcher's "scanned" log line
                                 (ResourceSyncHash md5)
  L2 writing the Resource List   the "scanned" -> "published" log lines
  L3 change latency              close of a file -> its entry in the open
                                 Change List (figure 6's writer and poller),
                                 p50 and p99 at --rate changes/s for
                                 --live-duration s, in the same set right
                                 after its first snapshot
  L4 the watcher's peak RSS      VmHWM of rs-watcher after L3

The tree: bench/make-tree's tree of N files, hard-linked (cp -al) into
tree-links-N/www/data, with a metadata record NAME.xml beside every second
NAME.pdf (about N/20 files more), so that half of the records link to a
listed metadata record (its type, length, modified and hash on the link,
rel="describes" back on the record's entry) and half have no link.  The
changes of L3 are made in a directory of their own (live/, made before the
server starts, so that both runs scan the same files; removed after),
four kinds in turn: a new record whose metadata is there, the rewrite of a
record that has metadata, a new record without metadata, the rewrite of a
metadata record (its record's entry is resolved again).  Results go to
$RS_BENCH_DIR/results-links-N.md.
"""
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import SET, NEW_BODY, log, vm_hwm, wait_idle, percentile  # noqa: E402

bench.TARGETS.update({
    "l": ("<=", 1.1),     # with one describedby rule and one mirror vs without
})
LINK_RULES = ("    ResourceSyncLink describedby ^(.+)\\.pdf$ $1.xml if-exists\n"
              "    ResourceSyncMirror https://mirror.example.org/bench/ pri=1\n")
LINKS_VERSION = "1"


class LinkBench(bench.Bench):
    def links_tree(self):
        """tree-links-N/www/data: the tree hard-linked, plus NAME.xml beside
        every second NAME.pdf.  Made once, like the tree (a marker)."""
        top = os.path.join(self.work, "tree-links-%d" % self.n)
        www = os.path.join(top, "www")
        data = os.path.join(www, "data")
        marker = data + ".complete"
        stamp = "%s %d\n" % (LINKS_VERSION, self.n)
        try:
            with open(marker) as f:
                if f.read() == stamp:
                    return www, data
        except OSError:
            pass
        shutil.rmtree(top, ignore_errors=True)
        os.makedirs(www)
        for d in (top, www):
            os.chmod(d, 0o755)
        cmd = "cp -al %s %s" % (self.data, data)
        self.note_cmd("the tree with metadata records", cmd)
        subprocess.run(["sh", "-c", cmd], check=True, timeout=self.op_timeout)
        made = 0
        pdfs = 0
        for d, _, files in os.walk(data):
            for f in sorted(files):
                if not f.endswith(".pdf"):
                    continue
                pdfs += 1
                if pdfs % 2:
                    continue
                with open(os.path.join(d, f[:-4] + ".xml"), "wb") as fh:
                    fh.write(b'<?xml version="1.0"?>\n<record file="%s"/>\n' % f.encode())
                made += 1
        with open(marker, "w") as f:
            f.write(stamp)
        log("links tree: %d metadata records for %d records in %s" % (made, pdfs, data))
        return www, data

    def live_plan(self, data, n):
        """live/ with the files the changes need; [(path, kind)]."""
        d = os.path.join(data, "live")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        os.chmod(d, 0o755)
        changes = []

        def made(name):
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(NEW_BODY)
            os.chmod(p, 0o644)
            return p
        for i in range(n):
            k = i % 4
            if k == 0:      # a new record, its metadata there
                made("c%06d.xml" % i)
                changes.append((os.path.join(d, "c%06d.pdf" % i), "c"))
            elif k == 1:    # a record with metadata rewritten
                made("u%06d.xml" % i)
                changes.append((made("u%06d.pdf" % i), "u"))
            elif k == 2:    # a new record without metadata
                changes.append((os.path.join(d, "c%06d.pdf" % i), "c"))
            else:           # a metadata record rewritten
                made("m%06d.pdf" % i)
                changes.append((made("m%06d.xml" % i), "u"))
        return changes

    def check_variant(self, srv, links):
        """The run measures what it says: the first part of the Resource
        List has rs:ln elements (a mirror link on every entry, describedby
        on records with metadata) exactly when the rules are configured."""
        base = srv.base + "/resourcesync/%s/" % SET
        with urllib.request.urlopen(base + "resourcelist.xml", timeout=60) as r:
            body = r.read()
        m = re.search(rb"<sitemap>\s*<loc>([^<]+)</loc>", body)
        if m:
            with urllib.request.urlopen(m.group(1).decode(), timeout=60) as r:
                body = r.read()
        if (b'<rs:ln rel="duplicate"' in body) != links:
            raise RuntimeError("%s: the Resource List %s rs:ln links" % (srv.dir, "lacks" if links
                                                                            else "has"))

    def one_run(self, links, rep, www, data):
        """A server on the tree, with or without the rules: its first scan,
        its first Resource List, then the live changes."""
        a = self.args
        name = "links-%s-%d" % ("on" if links else "off", rep)
        changes = self.live_plan(data, int(a.rate * a.live_duration))
        srv = bench.Server(self, name, www, data, "md5", max(2, a.conns), a.cl_max,
                           set_extra=LINK_RULES if links else "")
        self.servers.append(srv)
        srv.start()
        srv.first_lists(self.scan_timeout())
        r = {"scan": srv.scan_time, "files": srv.scan_files, "entries": srv.entries,
             "list": srv.publish_time}
        self.check_variant(srv, links)
        wait_idle(srv.watcher())
        srv.index = "/resourcesync/%s/changelist.xml" % SET
        s = self.live_changelist(srv, www, changes, a.rate)
        r.update(p50=s["p50"], p99=s["p99"], missing=s["missing"], n=s["n"],
                 w50=s["obs_p50"], w99=s["obs_p99"], mb=s["bytes"] / 1e6, req=s["ok"])
        log("%s: L3 %s" % (name, self.live_desc(s)))
        r["hwm"] = vm_hwm(srv.watcher())
        self.live_log_notes(srv, "L3 (%s)" % name)
        self.stop_server(srv)
        shutil.rmtree(os.path.join(data, "live"), ignore_errors=True)
        log("%s: scan %.3f s, list %.3f s, latency p50 %s / p99 %s ms, watcher %s kB"
            % (name, r["scan"], r["list"], r["p50"], r["p99"], r["hwm"]))
        return r

    def markdown(self, facts, started, elapsed):
        """bench.py's Markdown, with this run's servers in its notes."""
        a = self.args
        servers = ("- Servers: httpd prefork with %d children, LogLevel warn resourcesync:info, "
                   "one set over tree-links-%d/www/data with ResourceSyncHash md5, "
                   "ResourceSyncMaxEntries %d, ResourceSyncRescanInterval 86400; the runs with "
                   "links add:\n\n```\n%s```"
                   % (max(2, a.conns), self.n, a.cl_max, LINK_RULES.replace("    ", "")))
        return "\n".join(servers if line.startswith("- Servers:") else line
                         for line in super().markdown(facts, started, elapsed).split("\n"))

    def run(self):
        a = self.args
        a.figures = "L1,L2,L3,L4"
        self.figs = set(a.figures.split(","))
        started = "bench/run --links " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("links: %d files, reps %d, %g changes/s for %g s, work dir %s"
            % (self.n, a.reps, a.rate, a.live_duration, self.work))
        self.make_tree()
        www, data = self.links_tree()
        runs = {False: [], True: []}
        for rep in range(a.reps):
            for links in ((False, True) if rep % 2 == 0 else (True, False)):
                runs[links].append(self.one_run(links, rep, www, data))
        on, off = runs[True], runs[False]
        col = lambda rs, k: [r[k] for r in rs if r[k] is not None]
        what = "%d files (%d entries)" % (on[0]["files"], on[0]["entries"])
        self.result("L1", "first scan, md5, %s: describedby + mirror vs no links" % what,
                    col(on, "scan"), col(off, "scan"), "s", "l", "the watcher's scanned line")
        self.result("L2", "Resource List after the first scan: describedby + mirror vs no links",
                    col(on, "list"), col(off, "list"), "s", "l",
                    "scanned -> published log lines, ResourceSyncMaxEntries %d" % a.cl_max)
        for q in ("p50", "p99"):
            self.result("L3", "latency close -> entry in the open Change List, %s, %g changes/s: "
                        "describedby + mirror vs no links" % (q, a.rate),
                        col(on, q), col(off, q), "ms", "l",
                        "%d changes per run; never seen: %d with links, %d without"
                        % (on[0]["n"], sum(r["missing"] for r in on),
                           sum(r["missing"] for r in off)) if q == "p99" else "")
        # The same latency split: close -> the entry's datetime is the
        # watcher's part (noticed, hashed, journaled); the rest is publishing
        # and polling, which grows with the open list's bytes (a poller reads
        # the whole list at each change).
        for q in ("50", "99"):
            self.result("L3w", "latency close -> the entry's datetime (the watcher's part), p%s: "
                        "describedby + mirror vs no links" % q, col(on, "w" + q),
                        col(off, "w" + q), "ms", "l",
                        "the poller read %.0f MB in %d answers with links, %.0f MB in %d without "
                        "(per answer %.0f kB against %.0f kB)"
                        % (sum(col(on, "mb")), sum(col(on, "req")), sum(col(off, "mb")),
                           sum(col(off, "req")),
                           1e3 * sum(col(on, "mb")) / max(1, sum(col(on, "req"))),
                           1e3 * sum(col(off, "mb")) / max(1, sum(col(off, "req"))))
                        if q == "99" else "")
        self.result("L4", "watcher peak RSS after scan, list and changes: describedby + mirror "
                    "vs no links", col(on, "hwm"), col(off, "hwm"), "kB", "l", "rs-watcher VmHWM")
        self.report("mod_resourcesync link benchmarks", "results-links", facts, started,
                    time.time() - t0)
        if a.remove_tree:
            shutil.rmtree(os.path.join(self.work, "tree-links-%d" % self.n), ignore_errors=True)


def main():
    # bench.py's options (N, --quick, --reps, --live-duration, --cl-max,
    # --conns, --md, --keep, --remove-tree, --poll-interval) and --rate.
    rate = 1000.0
    argv = sys.argv[1:]
    if "--rate" in argv:
        i = argv.index("--rate")
        try:
            rate = float(argv[i + 1])
        except (IndexError, ValueError):
            sys.stderr.write("bench/run --links: --rate needs changes/s\n")
            return 2
        del argv[i:i + 2]
    if not 1 <= rate <= 10000:
        sys.stderr.write("bench/run --links: --rate 1..10000\n")
        return 2
    if not any(x.isdigit() for x in argv) and "--quick" not in argv:
        argv.insert(0, "100000")          # the scenario: 10^5 files
    sys.argv[1:] = argv

    class Runner(LinkBench):
        def __init__(self, args):
            args.rate = rate
            super().__init__(args)
    bench.Bench = Runner
    return bench.main()


if __name__ == "__main__":
    sys.exit(main())
