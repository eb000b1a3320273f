#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dumps.py - Resource Dump benchmarks (run it through `bench/run --dumps`).

Figures, each a ratio to a baseline measured in the same run on the same
tree (bench/make-tree, shared with bench.py):

  D1 building the whole dump      rs-tool dump (rs_dump_write on a state
                                  store scanned with md5: packages of at
                                  most 50,000 files, manifests, md5 of each
                                  member and package, fsync)
                                  vs  zip -0 -r -q of the same tree
                                  vs  tar -cf of the same tree (the floor:
                                  one read and one write per byte)
                                  and the module: time from its first
                                  "published Resource List" to "published
                                  Resource Dump" (informational)
  D2 serving a package            bytes/s of the module's first package
                                  vs  the same bytes as a static file (wrk),
                                  EnableSendfile Off on both, then On on both
  D4 rebuild after 1 % changed    rs-tool dump --dumpset (packages whose
                                  key is unchanged hard-linked from the
                                  previous generation) after touching 1 %
                                  of the files and rescanning
                                  vs  the whole build; against changed
                                  packages / all packages
  D5 change capture latency       figure 6 at 1,000 changes/s with
                                  ResourceSyncChangeDump on vs off
  D3 memory in package size       peak RSS (VmHWM) of the watcher after its
                                  dump build and of the httpd child after
                                  downloading every package: the set of N
                                  files vs its subtree a0 (N/10 files)

The machinery (tree, servers, repetitions, tables, Markdown) is bench.py's.
"""
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import RS_TOOL, SET, log, vm_hwm, parse_wrk, http_get  # noqa: E402

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
RS = "{http://www.openarchives.org/rs/terms/}"
bench.TARGETS.update({
    "d1z": ("<=", 1.0),   # the whole dump vs zip -0 -r -q
    "d2":  (">=", 0.9),   # serving a package vs the same file served statically
    "d3":  ("<=", 1.1),   # RSS, 10x the members: flat
})
D4_MAX = 5000             # files per package in D4, so that 1 % is a few packages


def dump_packages(base, timeout=600):
    """[(package URL, length)] from resourcedump.xml (following an index),
    waiting while it answers 503."""
    url = base + "/resourcesync/%s/resourcedump.xml" % SET
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                root = ET.fromstring(r.read())
            break
        except urllib.error.HTTPError as e:
            if e.code != 503 or time.time() > deadline:
                raise RuntimeError("%s: %d" % (url, e.code))
            time.sleep(0.2)
    if root.tag == SM + "sitemapindex":
        out = []
        for loc in root.iter(SM + "loc"):
            out.extend(_urlset_packages(loc.text))
        return out
    return [(u.find(SM + "loc").text, int(u.find(RS + "md").get("length")))
            for u in root.iter(SM + "url")]


def _urlset_packages(url):
    with urllib.request.urlopen(url, timeout=60) as r:
        root = ET.fromstring(r.read())
    return [(u.find(SM + "loc").text, int(u.find(RS + "md").get("length")))
            for u in root.iter(SM + "url")]


class DumpBench(bench.Bench):
    def start_dump_server(self, name, setdir):
        """A server whose set has ResourceSyncResourceDump; returns it with
        dump_time (s from its first published Resource List to its first
        published Resource Dump)."""
        srv = bench.Server(self, name, self.www, setdir, "md5", self.args.conns,
                           set_extra="    ResourceSyncResourceDump 1h\n")
        self.servers.append(srv)
        srv.start()
        to = self.scan_timeout()
        pub, _ = srv.wait_log(r"set %s: published Resource List 1 " % SET, to)
        dl, m = srv.wait_log(r"set %s: published Resource Dump \d+ \((\d+) files, (\d+) packages[^,]*, "
                             r"(\d+) bytes\)" % SET, to)
        srv.dump_time = bench.apache_time(dl) - bench.apache_time(pub)
        srv.dump_files, srv.dump_packages = int(m.group(1)), int(m.group(2))
        return srv

    def fig_d1(self):
        db = os.path.join(self.scratch, "dump.db")
        self.rm_db(db)
        self.timed("D1: scan with md5 (once)", "%s scan %s %s %s --hash md5"
                   % (RS_TOOL, db, SET, self.data), self.op_timeout)
        out = os.path.join(self.scratch, "dump-out")
        zipf = os.path.join(self.scratch, "tree.zip")
        tarf = os.path.join(self.scratch, "tree.tar")
        cmds = [("D1: rs-tool dump", "%s dump %s %s %s %s http://127.0.0.1/data/ --hash md5"
                 % (RS_TOOL, db, SET, self.data, out)),
                ("D1: zip -0", "cd %s && zip -0 -r -q %s ." % (self.data, zipf)),
                ("D1: tar -cf", "tar -cf %s -C %s ." % (tarf, self.data))]
        samples = [[] for _ in cmds]
        for i in range(self.args.reps):
            for k in [(i + j) % len(cmds) for j in range(len(cmds))]:
                for path in (out, zipf, tarf):
                    if os.path.isdir(path):
                        shutil.rmtree(path)
                    elif os.path.exists(path):
                        os.unlink(path)
                os.makedirs(out)
                samples[k].append(self.timed(cmds[k][0], cmds[k][1], self.op_timeout))
                if k == 0:    # the dump, before the next command clears it
                    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
                    npk = len([f for f in os.listdir(out) if f.endswith(".zip")])
        self.result("D1", "whole Resource Dump of %d files: engine (rs-tool dump) vs zip -0 -r -q"
                    % self.n, samples[0], samples[1], "s", "d1z",
                    "%d packages, %.1f MB, md5 of members and packages, fsync; zip -0 neither "
                    "hashes nor syncs" % (npk, size / 1e6))
        self.result("D1", "whole Resource Dump of %d files: engine vs tar -cf (the floor)" % self.n,
                    samples[0], samples[2], "s", "i", "one read and one write per byte")
        shutil.rmtree(out, ignore_errors=True)
        for f in (zipf, tarf):
            if os.path.exists(f):
                os.unlink(f)
        self.rm_db(db)

    def run_out(self, what, cmd):
        """Like bench.timed, but returns (seconds, stdout)."""
        self.note_cmd(what, cmd)
        t0 = time.perf_counter()
        r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=self.op_timeout)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s\n%s" % (what, r.returncode, cmd,
                                                           r.stderr.decode(errors="replace")))
        return dt, r.stdout.decode(errors="replace")

    def listing_order(self):
        """The tree's files in the inventory's listing order (directory,
        then name, bytewise), as paths."""
        files = []
        data = os.fsencode(self.data)
        for d, _, names in os.walk(data):
            rel = os.path.relpath(d, data)
            rel = b"" if rel == b"." else rel
            files.extend((rel, n) for n in names)
        files.sort()
        return [os.path.join(data, d, n) for d, n in files]

    def fig_d4(self):
        """Rebuild after 1 % of the files changed: full build into generation
        1 of a dumpset, touch 1 % of the files, rescan, rebuild into
        generation 2 reusing generation 1's unchanged packages."""
        db = os.path.join(self.scratch, "d4.db")
        ds = os.path.join(self.scratch, "d4-dumpset")
        self.rm_db(db)
        self.timed("D4: scan with md5 (once)", "%s scan %s %s %s --hash md5"
                   % (RS_TOOL, db, SET, self.data), self.op_timeout)
        files = self.listing_order()
        k = max(1, len(files) // 100)
        dump = ("%s dump %s %s %s %s/%%d http://127.0.0.1/data/ --hash md5 --max %d --dumpset %s"
                % (RS_TOOL, db, SET, self.data, ds, D4_MAX, ds))
        rescan = "%s scan %s %s %s --hash md5" % (RS_TOOL, db, SET, self.data)
        # clustered: a run of 1 % consecutive in listing order (a few leaf
        # directories); spread: every 100th file (every package changes)
        variants = [("clustered", lambda rep: files[(len(files) // 3 + rep * k) % len(files):]
                     [:k]),
                    ("spread", lambda rep: files[rep % 100::100])]
        stamp = int(time.time()) - 86400     # in the past: no file looks busy
        for name, pick in variants:
            full, rebuild, scans, ratios = [], [], [], []
            for rep in range(self.args.reps):
                shutil.rmtree(ds, ignore_errors=True)
                for g in (1, 2):
                    os.makedirs(os.path.join(ds, str(g)))
                t, out = self.run_out("D4: rs-tool dump, whole", dump % 1)
                full.append(t)
                npk = int(re.search(r"packages (\d+)", out).group(1))
                stamp += 10
                for f in pick(rep):
                    os.utime(f, (stamp, stamp))
                scans.append(self.timed("D4: rescan after touching 1 %", rescan,
                                        self.op_timeout))
                t, out = self.run_out("D4: rs-tool dump, rebuild", dump % 2)
                rebuild.append(t)
                m = re.search(r"packages (\d+) reused (\d+)", out)
                if int(m.group(1)) != npk:
                    raise RuntimeError("D4: %s packages after the rebuild, %d before"
                                       % (m.group(1), npk))
                ratios.append((npk - int(m.group(2))) / npk)
            changed = statistics.median(ratios)
            self.result("D4", "rebuild after touching 1 %% of %d files (%s) vs the whole build; "
                        "changed packages / all: %.3f" % (self.n, name, changed),
                        rebuild, full, "s", "i",
                        "%d packages of at most %d files; %d files touched (mtime); rescan "
                        "with md5 %.2f s (median); target: the ratio near %.3f (changed "
                        "packages / all), i.e. cost proportional to the changed packages"
                        % (npk, D4_MAX, k, statistics.median(scans), changed))
        shutil.rmtree(ds, ignore_errors=True)
        self.rm_db(db)

    def fig_d5(self):
        """Figure 6's close -> open Change List latency at 1,000 changes/s,
        ResourceSyncChangeDump on vs off (one server each, same writer)."""
        a = self.args
        www = self.live_setup("d5")
        n = int(1000 * a.live_duration)
        got = {}
        for mode, extra in (("off", ""), ("on", "    ResourceSyncChangeDump on\n")):
            plan = self.live_plan(www, "set", "cd-" + mode, n, True)
            srv = self.start_live("d5-" + mode, www, extra)
            log("figure D5: ResourceSyncChangeDump %s, 1000 changes/s for %g s"
                % (mode, a.live_duration))
            got[mode] = self.live_changelist(srv, www, plan, 1000)
            if mode == "on":
                # the packages of the lists closed during the run
                deadline = time.time() + 60
                pk = 0
                while time.time() < deadline:
                    pk = sum(int(x) for x in re.findall(
                        r"set %s: published (\d+) Change Dump package" % SET, srv.log_text()))
                    if pk >= got["on"]["lists"] - 1:
                        break
                    time.sleep(0.2)
                got["on"]["packages"] = pk
            self.live_log_notes(srv, "D5")
            self.stop_server(srv)
        on, off = got["on"], got["off"]
        self.result("D5", "close -> open Change List p50, 1,000 changes/s: ChangeDump on vs off",
                    on["p50"], off["p50"], "ms", "i")
        self.result("D5", "close -> open Change List p99, 1,000 changes/s: ChangeDump on vs off",
                    on["p99"], off["p99"], "ms", "6",
                    "on: %s; %d Change Lists read, %d Change Dump packages published. Off: %s"
                    % (self.live_desc(on), on["lists"], on["packages"], self.live_desc(off)))
        self.result("D5", "close -> open Change List p99, 1,000 changes/s: ChangeDump off",
                    off["p99"], None, "ms", "6", "the same figure with change dumps off")

    def fig_d2(self, srv, loc, length):
        path = loc[loc.index("/resourcesync/"):]
        d = os.path.join(self.www, "static")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        os.chmod(d, 0o755)
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
        st, n, body = http_get(conn, path)
        conn.close()
        if st != 200 or n != length:
            raise RuntimeError("GET %s: %d, %d bytes (listed %d)" % (path, st, n, length))
        f = os.path.join(d, "pkg.zip")
        with open(f, "wb") as fh:
            fh.write(body)
        os.chmod(f, 0o644)
        urls = [srv.base + path, srv.base + "/static/pkg.zip",
                srv.base + path + "?sendfile", srv.base + "/static/pkg.zip?sendfile"]
        rates = [[] for _ in urls]
        errors = set()
        wrk = "wrk -t1 -c%d -d%ds" % (self.args.conns, self.args.duration)
        for i in range(self.args.wrk_reps):
            for k in [(i + j) % len(urls) for j in range(len(urls))]:
                cmd = "%s %s" % (wrk, urls[k])
                self.note_cmd("D2: wrk", cmd)
                r = subprocess.run(cmd.split(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=self.args.duration + 60)
                rate, _, errs = parse_wrk(r.stdout.decode(errors="replace"))
                rates[k].append(rate * n / 1e6)
                errors.update(errs)
        extra = "; wrk: " + ", ".join(sorted(errors)) if errors else ""
        what = "package of %.1f MB" % (n / 1e6)
        self.result("D2", "MB/s, %s vs static copy, EnableSendfile Off on both" % what,
                    rates[0], rates[1], "MB/s", "d2", "both sides mmap the file%s" % extra)
        self.result("D2", "MB/s, %s vs static copy, EnableSendfile On on both" % what,
                    rates[2], rates[3], "MB/s", "d2", "both sides use sendfile")
        shutil.rmtree(d, ignore_errors=True)

    def download_all(self, srv, pkgs):
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=600)
        for loc, length in pkgs:
            st, n, _ = http_get(conn, loc[loc.index("/resourcesync/"):] + "?sendfile",
                                lambda c: None)
            if st != 200 or n != length:
                raise RuntimeError("GET %s: %d, %d bytes (listed %d)" % (loc, st, n, length))
        conn.close()
        return max(vm_hwm(p) or 0 for p in srv.workers())

    def fig_d3_d1m(self):
        small = self.start_dump_server("dump-small", os.path.join(self.data, "a0"))
        w_small = vm_hwm(small.watcher()) if small.watcher() else None
        c_small = self.download_all(small, dump_packages(small.base))
        self.stop_server(small)
        big = self.start_dump_server("dump-big", self.data)
        self.result("D1", "the module's first dump of %d files (log: published Resource List -> "
                    "published Resource Dump)" % big.dump_files, big.dump_time, None, "s", "i",
                    "%d packages, md5" % big.dump_packages)
        w_big = vm_hwm(big.watcher()) if big.watcher() else None
        pkgs = dump_packages(big.base)
        c_big = self.download_all(big, pkgs)
        note = "%d vs %d files in packages of at most 50,000" % (big.dump_files, small.dump_files)
        if w_big and w_small:
            self.result("D3", "watcher peak RSS after scan, snapshot and dump: %s" % note,
                        w_big, w_small, "kB", "d3", "rs-watcher, md5")
        self.result("D3", "httpd child peak RSS after downloading every package (sendfile): %s"
                    % note, c_big, c_small, "kB", "d3", "one connection")
        if "D2" in self.figs:
            self.fig_d2(big, *pkgs[0])
        self.stop_server(big)

    def run(self):
        a = self.args
        self.figs = set(a.figures.split(",")) if a.figures != bench.DEFAULT_FIGURES \
            else {"D1", "D2", "D3", "D4", "D5"}
        started = "bench/run --dumps " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("dumps: %d files, reps %d, figures %s, work dir %s"
            % (self.n, a.reps, ",".join(sorted(self.figs)), self.work))
        self.make_tree()
        if "D1" in self.figs:
            self.fig_d1()
        if self.figs & {"D1", "D2", "D3"}:
            self.fig_d3_d1m()
        if "D4" in self.figs:
            self.fig_d4()
        if "D5" in self.figs:
            self.fig_d5()
        self.report("mod_resourcesync dump benchmarks", "results-dumps", facts, started,
                    time.time() - t0)


if __name__ == "__main__":
    bench.Bench = DumpBench
    sys.exit(bench.main())
