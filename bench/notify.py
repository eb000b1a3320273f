#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""notify.py - notification benchmarks (run it through `bench/run --notify`).

Figures, on private servers whose set has ResourceSyncNotify on and whose
built-in hub (ResourceSyncHub on) has S benchmark subscribers:

  N1 latency close -> notification    from a file's close (the writer's
                                      time, as in figure 6) to the receipt
                                      of the change notification carrying
                                      it, by every subscriber, p50 and p99,
                                      at 100 and 1,000 changes/s, with 1,
                                      100 and 1,000 subscribers
                                      vs  figure 6's open Change List poller
                                      on the same changes in the same run
  N2 delivery throughput              notifications/s and entries/s received
                                      by 1,000 subscribers at 1,000 changes/s
                                      vs  what was offered (changes/s times
                                      subscribers)
  N3 watcher memory                   peak RSS (VmHWM) of the watcher after
                                      the same run with 1,000 subscribers vs
                                      with 1 (flat)

The benchmark subscriber is one process: an asyncio HTTP/1.1 server on
127.0.0.1 answering the callback URLs /cb/<i>, one per subscription
(verification GETs get their challenge back, deliveries a 204), noting
when each subscriber first received each change's <loc>.  The machinery
(servers, writer, Change List poller, tables, Markdown) is bench.py's.
"""
import array
import asyncio
import http.client
import multiprocessing
import os
import re
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import SET, log, vm_hwm, percentile, LOC_RX, STATUS_PATH  # noqa: E402

bench.TARGETS.update({
    "n1": ("<=", 100, "ms"),   # p99 close -> notification, 100 changes/s, 100 subscribers
    "n3": ("<=", 1.1),         # watcher VmHWM, 1,000 vs 1 subscriber: flat
})
SUBS_RX = re.compile(rb"hub-subscriptions-total: (\d+)")
TOPIC = "/resourcesync/%s/notify/change" % SET
HUB = "/resourcesync/hub"


# -- the benchmark subscriber (a process of its own) --------------------------

class _Run:
    """What one run expects: the index of each <loc>, and per subscriber the
    receipt time of each change (0: not yet)."""

    def __init__(self, locs, subs):
        self.index = {l: i for i, l in enumerate(locs)}
        self.got = [array.array("q", bytes(8 * len(locs))) for _ in range(subs)]
        self.filled = 0
        self.posts = 0
        self.entries = 0
        self.bytes = 0
        self.unsigned = 0
        self.first = 0
        self.last = 0


class _State:
    def __init__(self):
        self.verified = set()
        self.denied = 0
        self.run = _Run([], 0)


class _Callback(asyncio.Protocol):
    """HTTP/1.1 with keep-alive and Content-Length bodies: what a hub sends."""

    def __init__(self, state):
        self.state = state
        self.buf = bytearray()
        self.tr = None

    def connection_made(self, transport):
        self.tr = transport

    def data_received(self, data):
        self.buf += data
        while True:
            h = self.buf.find(b"\r\n\r\n")
            if h < 0:
                return
            head = bytes(self.buf[:h]).decode("latin-1").split("\r\n")
            n = 0
            sig = False
            for line in head[1:]:
                k, _, v = line.partition(":")
                k = k.strip().lower()
                if k == "content-length":
                    n = int(v)
                elif k == "x-hub-signature":
                    sig = True
            if len(self.buf) < h + 4 + n:
                return
            t = time.monotonic_ns()
            body = bytes(self.buf[h + 4:h + 4 + n])
            del self.buf[:h + 4 + n]
            method, target = head[0].split()[:2]
            self.tr.write(self.handle(method, target, body, sig, t))

    def handle(self, method, target, body, sig, t):
        path, _, query = target.partition("?")
        try:
            i = int(path.rsplit("/", 1)[1])
        except (IndexError, ValueError):
            return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        st = self.state
        if method == "GET":
            q = urllib.parse.parse_qs(query)
            mode = q.get("hub.mode", [""])[0]
            if mode == "denied":
                st.denied += 1
                return b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
            ch = q.get("hub.challenge", [""])[0].encode()
            if mode == "subscribe":
                st.verified.add(i)
            return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(ch), ch)
        run = st.run
        run.posts += 1
        run.bytes += len(body)
        run.entries += body.count(b"<url>")
        if not sig:
            run.unsigned += 1
        if 0 <= i < len(run.got):
            got, index = run.got[i], run.index
            hit = False
            for m in LOC_RX.finditer(body):
                k = index.get(m.group(1))
                if k is not None and not got[k]:
                    got[k] = t
                    run.filled += 1
                    hit = True
            if hit:
                run.first = run.first or t
                run.last = t
        return b"HTTP/1.1 204 No Content\r\n\r\n"


def subscriber_proc(ctl):
    """The benchmark subscriber.  Commands on the pipe ctl:
    ("expect", locs, subs): a new run; ("progress",): (verified, denied,
    filled pairs); ("collect",): the run's receipt times and counters;
    ("stop",)."""
    bench.child_signals()
    state = _State()
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(
        lambda: _Callback(state), "127.0.0.1", 0, backlog=1024))
    ctl.send(server.sockets[0].getsockname()[1])

    def control():
        while True:
            cmd = ctl.recv()
            if cmd[0] == "expect":
                state.run = _Run(cmd[1], cmd[2])    # one reference swapped
                ctl.send(True)
            elif cmd[0] == "progress":
                ctl.send((len(state.verified), state.denied, state.run.filled))
            elif cmd[0] == "collect":
                r = state.run
                ctl.send(([g.tobytes() for g in r.got],
                          dict(posts=r.posts, entries=r.entries, bytes=r.bytes,
                               unsigned=r.unsigned, first=r.first, last=r.last)))
            else:
                loop.call_soon_threadsafe(loop.stop)
                return

    threading.Thread(target=control, daemon=True).start()
    loop.run_forever()


class Subscriber:
    """The harness's handle on the subscriber process."""

    def __init__(self, nb):
        ctx = multiprocessing.get_context("fork")
        self.ctl, theirs = ctx.Pipe(True)
        self.proc = ctx.Process(target=subscriber_proc, args=(theirs,))
        nb.procs.append(self.proc)
        self.proc.start()
        if not self.ctl.poll(30):
            raise RuntimeError("the benchmark subscriber did not start")
        self.port = self.ctl.recv()

    def ask(self, *cmd):
        self.ctl.send(cmd)
        if not self.ctl.poll(120):
            raise RuntimeError("the benchmark subscriber does not answer")
        return self.ctl.recv()

    def cpu(self):
        """CPU seconds (user + system) the subscriber process has used."""
        try:
            with open("/proc/%d/stat" % self.proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def stop(self):
        if self.proc.is_alive():
            self.ctl.send(("stop",))
            self.proc.join(10)


# -- the figures -------------------------------------------------------------

class NotifyBench(bench.Bench):
    def live_run(self, *args, **kw):
        """bench.Bench.live_run, keeping the writer's close times of the
        last run: the notifications' latencies are measured from them."""
        r = super().live_run(*args, **kw)
        self.last_closes = r[1]
        return r

    def start_notify(self, name, www):
        a = self.args
        srv = bench.Server(
            self, name, www, os.path.join(www, "set"), "md5", max(2, a.conns), a.cl_max,
            set_extra="    ResourceSyncNotify on\n    ResourceSyncNotifyDelay %s\n"
                      % a.notify_delay,
            server_extra="ResourceSyncHub on\nResourceSyncHubAllowCallback 127.0.0.1\n"
                         "ResourceSyncHubMaxSubscriptions 10000000 10000000\n"
                         '<Location "%s">\n    SetHandler resourcesync-status\n'
                         "    Require all granted\n</Location>\n" % STATUS_PATH)
        self.servers.append(srv)
        srv.start()
        srv.wait_log(r"set %s: published Resource List" % SET, 60)
        srv.index = "/resourcesync/%s/changelist.xml" % SET
        return srv

    def subscribe(self, srv, sub, n):
        """n subscriptions to the change topic through the built-in hub,
        callbacks /cb/0 .. /cb/<n-1>; waits until the hub has stored them."""
        t0 = time.time()
        topic = srv.base + TOPIC
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        for i in range(n):
            form = urllib.parse.urlencode({
                "hub.mode": "subscribe", "hub.topic": topic, "hub.lease_seconds": "86400",
                "hub.callback": "http://127.0.0.1:%d/cb/%d" % (sub.port, i),
                "hub.secret": "bench-secret-%d" % i})
            conn.request("POST", HUB, form,
                         {"Content-Type": "application/x-www-form-urlencoded"})
            r = conn.getresponse()
            body = r.read()
            if r.status != 202:
                raise RuntimeError("POST %s: %d %s" % (HUB, r.status, body[:200]))
        conn.close()
        poller = bench.Poller(srv.port)
        deadline = time.time() + 60 + n * 0.1
        stored = 0
        try:
            while time.time() < deadline:
                verified, denied, _ = sub.ask("progress")
                if denied:
                    raise RuntimeError("the hub denied %d subscriptions" % denied)
                st, _, body = poller.get(STATUS_PATH + "?text")
                m = SUBS_RX.search(body or b"")
                stored = int(m.group(1)) if st == 200 and m else 0
                if verified >= n and stored >= n:
                    log("%d subscriptions stored in %.1f s" % (n, time.time() - t0))
                    return time.time() - t0
                time.sleep(0.2)
        finally:
            poller.close()
        raise RuntimeError("%d of %d subscriptions stored after %.0f s"
                           % (stored, n, time.time() - t0))

    def notify_run(self, srv, sub, www, nsubs, rate, changes):
        """One run: the writer makes `changes` at `rate` changes/s, figure
        6's Change List poller and the subscribers watch.  Returns (the
        poller's summary, the notifications' summary)."""
        a = self.args
        n = len(changes)
        locs = [self.loc_of(srv, www, p) for p, _ in changes]
        sub.ask("expect", locs, nsubs)
        cpu0, wall0 = sub.cpu(), time.time()
        cl = self.live_changelist(srv, www, changes, rate)
        closes = self.last_closes
        want = n * nsubs
        # Deliveries may trail the Change List: wait until every subscriber
        # has every change, or nothing more arrived for --notify-wait s, or
        # for 10 x --notify-wait s in all (a slow trickle): what has not
        # arrived then counts as never received.
        last, last_t = -1, time.time()
        give_up = last_t + 10 * a.notify_wait
        while True:
            _, _, filled = sub.ask("progress")
            if filled >= want:
                break
            if filled != last:
                last, last_t = filled, time.time()
            if time.time() - last_t > a.notify_wait or time.time() > give_up:
                log("figure N1: %d of %d deliveries after %.0f s; going on"
                    % (filled, want, time.time() - wall0))
                break
            time.sleep(0.1)
        got, st = sub.ask("collect")
        cpu, wall = sub.cpu() - cpu0, time.time() - wall0
        lat = []
        for g in got:
            times = array.array("q")
            times.frombytes(g)
            lat.extend((t - c) / 1e6 for t, c in zip(times, closes) if t)
        s = dict(st, n=n, subs=nsubs, pairs=want, missing=want - len(lat),
                 start=closes[0] if closes else 0, cpu=cpu, wall=wall)
        if lat:
            lat.sort()
            s.update(p50=percentile(lat, 50), p99=percentile(lat, 99), min=lat[0], max=lat[-1])
        else:
            s.update(p50=None, p99=None, min=None, max=None)
        return cl, s

    def notify_desc(self, s):
        return ("%d changes x %d subscribers: %d notifications (%d entries, %.1f MB) received, "
                "%d pairs never received, %d deliveries unsigned; latency min %.1f / max %.1f ms; "
                "the subscriber process used %.1f s of CPU in %.1f s"
                % (s["n"], s["subs"], s["posts"], s["entries"], s["bytes"] / 1e6,
                   s["missing"], s["unsigned"], s["min"] or 0, s["max"] or 0,
                   s["cpu"], s["wall"]))

    def fig_n(self):
        a = self.args
        rates = [100, 1000]
        hwm = {}
        for nsubs in a.subscribers:
            www = self.live_setup("n%d" % nsubs)
            # the files to rewrite exist before the server starts (figure 6)
            plans = {r: self.live_plan(www, "set", "r%d" % r, max(1, int(r * a.live_duration)),
                                       True) for r in rates}
            sub = Subscriber(self)
            srv = self.start_notify("notify-%d" % nsubs, www)
            try:
                self.subscribe(srv, sub, nsubs)
                for rate in rates:
                    log("figure N1: %d subscribers, %d changes/s for %g s"
                        % (nsubs, rate, a.live_duration))
                    cl, s = self.notify_run(srv, sub, www, nsubs, rate, plans[rate])
                    self.report_n1(nsubs, rate, cl, s)
                    if nsubs == max(a.subscribers) and rate == max(rates) and "N2" in self.figs:
                        self.report_n2(s, rate)
                hwm[nsubs] = vm_hwm(srv.watcher()) if srv.watcher() else None
                self.live_log_notes(srv, "N")
            finally:
                sub.stop()
            self.stop_server(srv)
        lo, hi = min(a.subscribers), max(a.subscribers)
        if "N3" in self.figs and lo != hi and hwm.get(lo) and hwm.get(hi):
            self.result("N3", "watcher peak RSS (VmHWM) after the same run: %d vs %d "
                        "subscribers" % (hi, lo), hwm[hi], hwm[lo], "kB", "n3",
                        "rs-watcher (driver, delivery thread, hub intake); the run: %g s at "
                        "100 and %g s at 1,000 changes/s" % (a.live_duration, a.live_duration))

    def report_n1(self, nsubs, rate, cl, s):
        if "N1" not in self.figs:
            return
        for q in ("p50", "p99"):
            key = "n1" if (q == "p99" and rate == 100 and nsubs == 100) else "i"
            self.result("N1", "latency from close to the notification's receipt, %s, "
                        "%d changes/s, %d subscriber(s)" % (q, rate, nsubs),
                        s[q], cl[q], "ms", key,
                        "ours: %s. Baseline (figure 6's poller of the open Change List, same "
                        "changes, same run): %s" % (self.notify_desc(s), self.live_desc(cl))
                        if q == "p99" else "")

    def report_n2(self, s, rate):
        span = (s["last"] - s["start"]) / 1e9 if s["last"] > s["start"] else None
        if not span:
            self.notes.append("figure N2: nothing was delivered")
            return
        offered = rate * s["subs"]
        self.result("N2", "entries/s delivered to %d subscribers at %d changes/s (vs offered: "
                    "changes/s x subscribers)" % (s["subs"], rate),
                    round(s["entries"] / span), offered, "entries/s", "i",
                    "from the first close to the last receipt, %.2f s; %s"
                    % (span, self.notify_desc(s)))
        self.result("N2", "notifications/s delivered to %d subscribers" % s["subs"],
                    round(s["posts"] / span), None, "notifications/s", "i",
                    "%.1f MB/s of payload" % (s["bytes"] / span / 1e6))

    def run(self):
        a = self.args
        self.figs = set(a.figures.split(",")) if a.figures != bench.DEFAULT_FIGURES \
            else {"N1", "N2", "N3"}
        a.figures = ",".join(sorted(self.figs))
        started = "bench/run --notify " + " ".join(sys.argv[1:])
        t0 = time.time()
        facts = self.machine()
        log("notifications: subscribers %s, %g s per rate, figures %s, work dir %s"
            % (",".join(map(str, a.subscribers)), a.live_duration, a.figures, self.work))
        self.fig_n()
        self.notes.append(
            "Figures N: a server per subscriber count (prefork, %d children; ResourceSyncHash "
            "md5, ResourceSyncMaxEntries %d, ResourceSyncNotify on, ResourceSyncNotifyDelay %s, "
            "ResourceSyncHub on, ResourceSyncHubAllowCallback 127.0.0.1); the subscribers "
            "subscribe to the change topic through the hub (with hub.secret: deliveries are "
            "signed) and are one asyncio process on 127.0.0.1; figure 6's writer (every other "
            "change the rewrite of an existing file) and Change List poller (%g ms pause) run "
            "on the same changes; waiting at most %g s without progress for deliveries after "
            "the poller is done."
            % (max(2, a.conns), a.cl_max, a.notify_delay, a.poll_interval, a.notify_wait))
        self.report("mod_resourcesync notification benchmarks", "results-notify", facts,
                    started, time.time() - t0)


def main():
    """bench.main's options, plus --subscribers, --notify-delay and
    --notify-wait (taken out of argv before bench.main parses it)."""
    argv = sys.argv[1:]
    quick = "--quick" in argv
    opts = {"--subscribers": "1,10,100" if quick else "1,100,1000",
            "--notify-delay": "100ms", "--notify-wait": "15"}
    rest = []
    i = 0
    while i < len(argv):
        k, eq, v = argv[i].partition("=")
        if k in opts:
            if not eq:
                i += 1
                if i >= len(argv):
                    sys.exit("bench/run --notify: %s needs a value" % k)
                v = argv[i]
            opts[k] = v
        else:
            rest.append(argv[i])
        i += 1
    try:
        subs = sorted(set(int(x) for x in opts["--subscribers"].split(",")))
        wait = float(opts["--notify-wait"])
    except ValueError:
        sys.exit("bench/run --notify: --subscribers is a list of counts, --notify-wait seconds")
    if not subs or subs[0] < 1 or subs[-1] > 100000 or not 1 <= wait <= 600:
        sys.exit("bench/run --notify: subscribers 1..100000, notify-wait 1..600")
    if not re.fullmatch(r"\d+(ms|s|m)?", opts["--notify-delay"]):
        sys.exit("bench/run --notify: --notify-delay as ResourceSyncNotifyDelay (e.g. 100ms)")

    class Bench(NotifyBench):
        def __init__(self, args):
            args.subscribers = subs
            args.notify_delay = opts["--notify-delay"]
            args.notify_wait = wait
            super().__init__(args)

    sys.argv[1:] = rest
    bench.Bench = Bench
    return bench.main()


if __name__ == "__main__":
    sys.exit(main())
