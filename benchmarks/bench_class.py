"""A class on one server: 30 concurrent sessions open, type, drag and switch pages (issue 32 item 9).

Usage::

    python benchmarks/bench_class.py [--sessions 30] [--spread 30] [--think 1.0] [--seed 0]

Starts ``streamlit run app.py`` as a visitor's server runs it (the background warm-up of :mod:`ui.warmup`
included), opens the teacher's link once (the first run starts the warm-up), waits for the warm-up's
line in its log, then drives ``--sessions`` sessions at once.

**Clients of Streamlit's own protocol, not browser pages.**  Each session is one websocket client of the
server (``/_stcore/stream``) sending the ``BackMsg`` a browser sends and reading every ``ForwardMsg`` back
(``streamlit.proto``).  Thirty Chromium pages would each lay out and draw every run (the live view's
JavaScript, Plotly, React) on the same two cores the server needs; the run would then measure the browsers
fighting the server, not the server.  What one browser adds to a run is measured by ``bench_app.py``.

Each session, its start spread uniformly over ``--spread`` seconds (a class opening one link within a
minute), a pause of ``--think`` seconds (x 0.5-1.5, random) between its actions:

1. **open** the teacher's link (``?src=sample&sample=english``: the Playground on a built-in sample);
2. **paste**: the sidebar's source to "Paste", then **type** its own distinct text in three bursts (the
   sidebar follows typing, so each pause is a run that trains on the text so far);
3. **size**: sets "Vocabulary size to train" to its own size (a training on its text);
4. **drag**: moves the live view's slider to a smaller size (the browser reports the size on release);
5. **switch** to Compare, then back to the Playground.

Checked for every session after the run (the engine's own tokens, computed here, not by the server):

* the Playground's live view after the drag draws exactly the session's text, at the size it dragged to,
  cut into exactly the tokens that ``TrainingSpec(...).train(text).with_vocab_size(size).encode(text)`` gives,
  and the whole text's token count it shows is that encoding's length; the same after the switch back;
* the address bar Compare publishes carries the session's own text and size;
* no run raised (no exception element in any run).

Reported: the script-run time (from sending the ``BackMsg`` to the run's ``script_finished``, as the
session sees it, queueing included) per action, median and 95th percentile over all runs (targets: median
< 1 s, p95 < 3 s); the server's resident memory (RSS) at the start, its peak and at the end; and how often
the server loaded each production tokenizer and trained each built-in sample's default specs during the
whole life of the process (the server is started with counters around both: each must be 1).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import gzip
import hashlib
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("BPE_PLAYGROUND_ENCODINGS", str(ROOT.parent / "shared" / "data" / "encodings"))

TEACHER_LINK = "src=sample&sample=english"
"""The query string every session opens (the Playground on the English sample)."""

NEVER = 0xFFFFFFFF
"""A byte boundary never joined (as :data:`bpe_core.analysis.live.NEVER` and ``live.js``)."""

INSIDE_SPECIAL = 0xFFFFFFFE
"""A byte boundary inside a special token (``live.js``'s ``INSIDE_SPECIAL``)."""

WORDS = (
    "river", "stone", "lantern", "maple", "copper", "violet", "harbor", "meadow", "falcon", "ember", "quartz",
    "willow", "canyon", "orbit", "pepper", "thunder", "velvet", "saddle", "glacier", "pixel", "walnut", "cobalt",
)  # fmt: skip
"""The words the sessions' texts are made of."""


def session_text(i: int) -> str:
    """Session ``i``'s own text: a sentence of its own words and numbers, repeated with variations."""
    rng = random.Random(1000 + i)
    lines = []
    for n in range(12):
        words = rng.sample(WORDS, 7)
        lines.append(f"Student {i:02d} line {n}: the {' '.join(words)} costs {rng.randint(10, 99_999)} coins.")
    return "\n".join(lines)


def session_size(i: int) -> int:
    """Session ``i``'s vocabulary size to train (distinct per session, above 256 bytes + one special)."""
    return 330 + 7 * i


# -- the counting server ------------------------------------------------------------------------------------------


def serve(counts_path: str, streamlit_args: list[str]) -> None:
    """Run ``streamlit run`` in this process with counters on production loads and trainings.

    Every production tokenizer's loader (:data:`bpe_core.production.registry.PRODUCTION`) and
    :meth:`bpe_core.interface.TrainingSpec.train` are wrapped to count their calls; the counts
    (``{"loads": {key: n}, "samples": {"sample|spec": n}, "trainings": n}``) are written to
    ``counts_path`` every half second.
    """
    from bpe_core.interface import TrainingSpec
    from bpe_core.production import registry

    lock = threading.Lock()
    loads: dict[str, int] = {}
    trainings: dict[str, int] = {}

    for key, spec in list(registry.PRODUCTION.items()):

        def loader(key=key, original=spec.loader):
            with lock:
                loads[key] = loads.get(key, 0) + 1
            return original()

        registry.PRODUCTION[key] = dataclasses.replace(spec, loader=loader)

    original_train = TrainingSpec.train

    def train(self, text, *args, **kwargs):
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        with lock:
            trainings[f"{digest}|{self}"] = trainings.get(f"{digest}|{self}", 0) + 1
        return original_train(self, text, *args, **kwargs)

    TrainingSpec.train = train

    def dump() -> None:
        from ui.samples import SAMPLES, load_sample

        names = {hashlib.sha256(load_sample(k).encode("utf-8")).hexdigest()[:16]: k for k in SAMPLES}
        while True:
            with lock:
                samples = {
                    f"{names[k.split('|')[0]]}|{k.split('|', 1)[1]}": n
                    for k, n in trainings.items()
                    if k.split("|")[0] in names
                }
                out = {"loads": dict(loads), "samples": samples, "trainings": sum(trainings.values())}
            Path(counts_path + ".tmp").write_text(json.dumps(out))
            os.replace(counts_path + ".tmp", counts_path)
            time.sleep(0.5)

    threading.Thread(target=dump, daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *streamlit_args]
    cli.main()


def start_counting_server(log, counts_path: str):
    """Start :func:`serve` as the server process, on a free port; returns ``(process, url)``."""
    from benchmarks.serving import start_server

    return start_server(
        log, command=[sys.executable, str(Path(__file__).resolve()), "--serve", counts_path, "--"], limit=300
    )


# -- one session, as Streamlit's protocol ---------------------------------------------------------------------


@dataclass
class Run:
    """One script run a session asked for: its action, seconds from request to ``script_finished``."""

    action: str
    seconds: float


@dataclass
class Session:
    """One student's websocket session and what it saw."""

    i: int
    text: str
    size: int
    runs: list[Run] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    widgets: dict[str, str] = field(default_factory=dict)  # label or component name -> widget id
    pages: dict[str, str] = field(default_factory=dict)  # url path ("" = the Playground) -> page script hash
    live: dict | None = None  # the last live view's data (JSON)
    query: str = ""  # the last address bar (query string) the page published
    seen: dict[str, object] = field(default_factory=dict)  # what was checked against, per step

    async def request(self, ws, action: str, **fields) -> None:
        """Send one ``rerun_script`` (``fields``: the ``ClientState``'s), read until the run is over."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = fields.pop("query_string", self.query)
        state.page_script_hash = fields.pop("page_script_hash", "")
        for wid, kind, value in fields.pop("widgets", ()):
            w = state.widget_states.widgets.add()
            w.id = wid
            setattr(w, kind, value)
        t0 = time.perf_counter()
        await ws.send(msg.SerializeToString())
        while True:
            fwd = ForwardMsg()
            fwd.ParseFromString(await ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                for page in fwd.new_session.app_pages:
                    self.pages[page.url_pathname] = page.page_script_hash
            elif kind == "navigation":
                for page in fwd.navigation.app_pages:
                    self.pages[page.url_pathname] = page.page_script_hash
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                self._element(fwd.delta.new_element)
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.runs.append(Run(action, time.perf_counter() - t0))
                return

    def _element(self, element) -> None:
        kind = element.WhichOneof("type")
        sub = getattr(element, kind)
        if kind == "exception":
            self.errors.append(f"{sub.type}: {sub.message}")
        elif kind == "bidi_component":
            self.widgets[sub.component_name] = sub.id
            if sub.component_name == "bpe_playground.live_view":
                self.live = json.loads(sub.json)
        elif getattr(sub, "id", "") and getattr(sub, "label", ""):
            self.widgets[sub.label] = sub.id


async def visit(s: Session, url: str) -> None:
    """Open the teacher's link once (one run) and close."""
    import websockets

    uri = url.replace("http", "ws", 1) + "/_stcore/stream"
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None, origin=url) as ws:
        await s.request(ws, "open", query_string=TEACHER_LINK)


async def student(s: Session, url: str, start: float, think: float, rng: random.Random) -> None:
    """One session's actions (see the module docstring)."""
    import websockets

    async def pause() -> None:
        await asyncio.sleep(think * rng.uniform(0.5, 1.5))

    await asyncio.sleep(start)
    uri = url.replace("http", "ws", 1) + "/_stcore/stream"
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None, origin=url) as ws:
        await s.request(ws, "open", query_string=TEACHER_LINK)
        await pause()
        await s.request(ws, "paste", widgets=[(s.widgets["Source"], "string_value", "Paste")])
        for part in (1, 2, 3):
            await pause()
            typed = s.text[: len(s.text) * part // 3]
            await s.request(ws, "type", widgets=[(s.widgets["Your text"], "string_value", typed)])
        await pause()
        await s.request(ws, "size", widgets=[(s.widgets["Vocabulary size to train"], "double_value", s.size)])
        s.seen["trained size"] = (s.live or {}).get("hi")
        await pause()
        top = (s.live or {}).get("hi", s.size)  # the slider's right end: the size trained (a short text may stop early)
        dragged = max(top - 40 - s.i % 13, 257)  # a smaller size, distinct per session
        version = (s.live or {}).get("v")
        report = {"size": {"n": dragged, "t": time.time() * 1000, "v": version}}
        await s.request(ws, "drag", widgets=[(s.widgets["bpe_playground.live_view"], "json_value", json.dumps(report))])
        s.seen["after drag"] = (dragged, s.live)
        await pause()
        await s.request(ws, "switch", page_script_hash=s.pages["compare"], query_string="")  # as a link click
        s.seen["compare query"] = s.query
        await pause()
        await s.request(ws, "switch", page_script_hash=s.pages[""], query_string="")
        s.seen["back"] = (dragged, s.live)


# -- the checks -------------------------------------------------------------------------------------------------


def unpack(packed: dict) -> list[int]:
    """``ui.live_view.pack``'s inverse (little-endian ints, gzip, base64; width-2 sentinels restored)."""
    raw = gzip.decompress(base64.b64decode(packed["z"]))
    arr = array("H" if packed["w"] == 2 else "I")
    arr.frombytes(raw)
    if sys.byteorder == "big":
        arr.byteswap()
    if packed["w"] == 2:
        return [NEVER if v == 0xFFFF else NEVER - 1 if v == 0xFFFE else v for v in arr]
    return list(arr)


def live_tokens(live: dict, size: int) -> list[bytes]:
    """The tokens (their bytes) the live view draws at ``size``: ``live.js``'s rule for a BPE payload.

    A byte boundary ``i`` ends a token at size ``L`` when the size it is joined at exceeds ``L``; that size is
    the payload's ``gone[i]``, or from its merge rank (``lo + 1 + rank``; never; or ``lo`` inside a special).
    """
    data = live["text"].encode("utf-8")
    bpe, lo = live["bpe"], live["lo"]
    rank = unpack(bpe["rank"])
    gone = unpack(bpe["gone"]) if bpe.get("gone") else None
    cuts = [0]
    for i in range(len(data) - 1):
        r = rank[i]
        g = gone[i] if gone else NEVER if r == NEVER else lo if r == INSIDE_SPECIAL else lo + 1 + r
        if g > size:
            cuts.append(i + 1)
    cuts.append(len(data))
    return [data[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def check(s: Session) -> list[str]:
    """What differs between what session ``s`` saw and the engine's tokens of its own text (empty: nothing)."""
    from urllib.parse import parse_qs

    from ui.inputs import default_spec

    problems = list(s.errors)
    tok = dataclasses.replace(default_spec("bpe"), vocab_size=s.size).train(s.text)
    for step in ("after drag", "back"):
        dragged, live = s.seen.get(step, (None, None))
        if not live:
            problems.append(f"{step}: no live view")
            continue
        if live["text"] != s.text or live["textChars"] != len(s.text):
            problems.append(f"{step}: the live view draws another text ({live['text'][:40]!r})")
            continue
        if live.get("size") != dragged:
            problems.append(f"{step}: the live view is at size {live.get('size')}, not the dragged {dragged}")
        at = tok.with_vocab_size(dragged)
        ids = at.encode(s.text)
        expected = [at.vocab[i] for i in ids]
        drawn = live_tokens(live, dragged)
        if drawn != expected:
            problems.append(f"{step}: {len(drawn)} tokens drawn, the engine gives {len(expected)} other ones")
        totals = unpack(live["totals"]) if live.get("totals") else None
        if totals is None or totals[dragged - live["lo"]] != len(ids):
            problems.append(f"{step}: token count {totals and totals[dragged - live['lo']]}, the engine {len(ids)}")
    if s.seen.get("trained size") != tok.max_vocab_size:
        problems.append(f"trained to {s.seen.get('trained size')}, the engine to {tok.max_vocab_size}")
    query = parse_qs(s.seen.get("compare query", ""))
    if query.get("text") != [s.text] or query.get("vocab") != [str(s.size)]:
        problems.append(f"Compare's link carries another text or size: {s.seen.get('compare query', '')[:80]!r}")
    return problems


# -- the run ----------------------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


async def drive(url: str, args: argparse.Namespace) -> list[Session]:
    rng = random.Random(args.seed)
    sessions = [Session(i, session_text(i), session_size(i)) for i in range(args.sessions)]
    starts = sorted(rng.uniform(0, args.spread) for _ in sessions)
    tasks = [
        student(s, url, start, args.think, random.Random(rng.random()))
        for s, start in zip(sessions, starts, strict=True)
    ]
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for s, r in zip(sessions, results, strict=True):
        if isinstance(r, BaseException):
            s.errors.append(f"session failed: {type(r).__name__}: {r}")
    return sessions


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[4:] if sys.argv[3:4] == ["--"] else sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--spread", type=float, default=30.0, help="seconds over which the sessions open")
    ap.add_argument("--think", type=float, default=1.0, help="seconds between a session's actions (x 0.5-1.5)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import psutil
    from bench_app import warmed

    from bpe_core.production.registry import PRODUCTION
    from ui.samples import SAMPLES
    from ui.warmup import default_specs

    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "server.log", "w+b") as log:
        counts_path = str(Path(tmp) / "counts.json")
        load0 = os.getloadavg()
        t0 = time.perf_counter()
        proc, url = start_counting_server(log, counts_path)
        server = psutil.Process(proc.pid)
        teacher = Session(-1, "", 0)  # the teacher opens the link first: the first run starts the warm-up
        asyncio.run(visit(teacher, url))
        line = warmed(log, proc)
        print(f"server up and warmed in {time.perf_counter() - t0:.1f} s; {line}", flush=True)
        rss = [server.memory_info().rss]
        done = threading.Event()

        def sample_rss() -> None:
            while not done.wait(0.25):
                rss.append(server.memory_info().rss)

        sampler = threading.Thread(target=sample_rss, daemon=True)
        sampler.start()
        t1 = time.perf_counter()
        sessions = asyncio.run(drive(url, args))
        wall = time.perf_counter() - t1
        load1 = os.getloadavg()
        done.set()
        sampler.join()
        rss.append(server.memory_info().rss)
        time.sleep(1.0)  # the last counts written
        counts = json.loads(Path(counts_path).read_text())
        proc.terminate()
        proc.wait(30)

    runs = [r for s in sessions for r in s.runs]
    print(f"\n{args.sessions} sessions (Streamlit protocol clients), opened over {args.spread:.0f} s, "
          f"{args.think:.1f} s think time; {len(runs)} script runs in {wall:.1f} s; "
          f"load average {load0[0]:.1f} before, {load1[0]:.1f} after")  # fmt: skip
    print(f"{'action':<8} {'runs':>5} {'median s':>9} {'p95 s':>7} {'max s':>7}")
    for action in ("open", "paste", "type", "size", "drag", "switch", "all"):
        xs = [r.seconds for r in runs if action in ("all", r.action)]
        if xs:
            print(f"{action:<8} {len(xs):>5} {statistics.median(xs):>9.2f} {pct(xs, 0.95):>7.2f} {max(xs):>7.2f}")
    allx = [r.seconds for r in runs]
    med, p95 = statistics.median(allx), pct(allx, 0.95)
    print(f"script run: median {med:.2f} s (target < 1 s: {'met' if med < 1 else 'MISSED'}), "
          f"p95 {p95:.2f} s (target < 3 s: {'met' if p95 < 3 else 'MISSED'})")  # fmt: skip
    mib = [r / 2**20 for r in rss]
    print(f"server RSS: {mib[0]:.0f} MiB after the warm-up, peak {max(mib):.0f} MiB, {mib[-1]:.0f} MiB at the end")

    problems = {}
    for s in sessions:
        try:
            problems[s.i] = check(s)
        except (ValueError, KeyError, TypeError) as exc:  # what the session saw cannot even be compared
            problems[s.i] = [f"check failed: {type(exc).__name__}: {exc}"]
    bad = {i: p for i, p in problems.items() if p}
    print(f"own text and tokens: {len(sessions) - len(bad)} of {len(sessions)} sessions exactly their own")
    for i, p in sorted(bad.items()):
        print(f"  session {i}: {'; '.join(p[:3])}")

    loads = counts["loads"]
    expected_samples = {f"{k}|{spec}" for k in SAMPLES for spec in default_specs()}
    trained = counts["samples"]
    missing = "; not loaded: " + ", ".join(sorted(set(PRODUCTION) - set(loads))) if set(PRODUCTION) - set(loads) else ""
    print(f"production tokenizers loaded: {len(loads)} of {len(PRODUCTION)}, "
          f"each {sorted(set(loads.values()))} time(s){missing}")  # fmt: skip
    repeated = {k: n for k, n in trained.items() if n != 1}
    print(f"built-in samples trained: {len(trained)} (sample, spec) pairs ({len(expected_samples)} warmed), "
          f"each {sorted(set(trained.values()))} time(s){'; again: ' + str(repeated) if repeated else ''}; "
          f"{counts['trainings']} trainings in all")  # fmt: skip


if __name__ == "__main__":
    main()
