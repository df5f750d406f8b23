"""The baccarat monitor page's cost in the browser: script time a render takes at 1920x1080.

    python bench/bench_monitor.py [--runs 3] [--seed 5324] [--size 1920x1080]

The scoreboard server (controller/scoreboard) runs in this process on a free loopback port and
reads a ``controller.app.Publication`` that this bench fills, one thread publishing as the
table's loop does (a beat every 0.1 s, a new version per event). Debian's headless Chromium
(tests/services/chromium.py: ``/usr/bin/chromium`` through its chromedriver, nothing
downloaded) shows the page at 1920x1080, device scale 1.

The shoe: a real eight-deck shoe shuffled with ``random.Random(seed)`` (benchmark data, not the
certified RNG) and dealt by ``controller.games.baccarat.deal`` to the cut card (14 cards left),
about 80 coups. Each coup is the table's four published versions: betting, dealing, the result
(settling, the result added to the shoe's results), betting again. For every version, the
renderer's main-thread script time (Chrome DevTools Protocol ``Performance.getMetrics``:
``ScriptDuration``, and ``RecalcStyleDuration`` + ``LayoutDuration``) is read before it is
published and once the page has shown it; nothing else runs script in the page meanwhile (the
bench looks at the page's version only after the second reading). This measures whatever page
the server serves, so the same bench measured the page before and after it changed.

Printed per run: the median and maximum script time of the result versions of the last ten
coups (a full shoe on the board), of every result version, and of the other versions, and the
style and layout time of the last ten result versions. Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.app import Publication  # noqa: E402
from controller.config.profile import ScoreboardSettings  # noqa: E402
from controller.games import baccarat  # noqa: E402
from controller.games.baccarat import roads  # noqa: E402
from controller.scoreboard.server import ScoreboardServer  # noqa: E402

#: The cut card: the shoe ends this many cards before its last (5324.20(f)(9) "last hand").
CUT_LEFT = 14
SETTLE_S = 0.25  # after a publish, the page has shown it (a render is well under this)
WAIT_S = 10.0


def dealt_shoe(seed: int) -> list[tuple[str, int, int]]:
    """One eight-deck shoe dealt to the cut card: (result code, player total, banker total)."""
    cards = baccarat.shoe_cards(8)
    random.Random(seed).shuffle(cards)
    out = []
    pos = 0
    while len(cards) - pos > CUT_LEFT:
        coup = baccarat.deal(cards, pos)
        pos += coup.cards_used
        out.append((roads.result_of(coup).code, coup.player_total, coup.banker_total))
    return out


def shoe_views(
    shoe: list[tuple[str, int, int]], extra: Mapping[str, object]
) -> Iterator[tuple[str, dict[str, object]]]:
    """The versions a table publishes over the shoe, each with its kind (``result`` or
    ``state``)."""
    results: list[str] = []
    last: list[int] = []
    for n, (code, player, banker) in enumerate(shoe, start=1):
        base = {"game": "baccarat", "shoe": 1, "halted": False, "last_hand": False, **extra}
        yield (
            "state",
            {
                **base,
                "state": "betting",
                "coup": n,
                "results": list(results),
                "announce": "",
                "last_totals": list(last),
            },
        )
        yield (
            "state",
            {
                **base,
                "state": "dealing",
                "coup": n,
                "results": list(results),
                "announce": "",
                "last_totals": list(last),
            },
        )
        results.append(code)
        last = [player, banker]
        winner = {"B": "BANKER WINS", "P": "PLAYER WINS", "T": "TIE HAND"}[code[0]]
        yield (
            "result",
            {
                **base,
                "state": "settling",
                "coup": n,
                "results": list(results),
                "announce": winner,
                "last_totals": list(last),
            },
        )


class Loop:
    """Publishes as the table's loop thread does: every 0.1 s (a beat), the newest view."""

    def __init__(self, publication: Publication) -> None:
        self.publication = publication
        self.view: Mapping[str, object] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="bench-loop")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            with self._lock:
                self.publication.publish(self.view)

    def show(self, view: Mapping[str, object]) -> int:
        with self._lock:
            self.view = view
            self.publication.publish(view)
            return self.publication.latest()[0]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


#: Injected before the page's own script: times every ``state`` event's handler (the page's
#: render, its JSON.parse and any layout it forces) with performance.now(), and the time from
#: the event to the end of the next frame (style, layout and paint included); kept in a list
#: the bench reads after its second metrics reading.
TIMER = """
(() => {
  window.__bench = [];
  const add = EventSource.prototype.addEventListener;
  EventSource.prototype.addEventListener = function (type, fn, opts) {
    if (type !== "state") { return add.call(this, type, fn, opts); }
    return add.call(this, type, function (ev) {
      const t0 = performance.now();
      fn.call(this, ev);
      const t1 = performance.now();
      requestAnimationFrame(() => setTimeout(() => {
        window.__bench.push([t1 - t0, performance.now() - t0]);
      }, 0));
    }, opts);
  };
})();
"""


def metrics(driver: Any) -> dict[str, float]:
    got = driver.execute_cdp_cmd("Performance.getMetrics", {})
    return {m["name"]: float(m["value"]) for m in got["metrics"]}


def one_run(browser: Any, shoe: list[tuple[str, int, int]], size: tuple[int, int]) -> dict:
    publication = Publication()
    loop = Loop(publication)
    board = ScoreboardServer(
        ScoreboardSettings(enabled=True, address="127.0.0.1", port=0), publication, "baccarat"
    )
    board.start()
    width, height = size
    driver = browser.new_driver(
        width=width,
        height=height,
        extra_args=("--hide-scrollbars", "--force-device-scale-factor=1"),
    )
    samples: dict[str, list[tuple[float, ...]]] = {"result": [], "state": []}
    try:
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        driver.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TIMER})
        extra: dict[str, object] = {}
        loop.show({"game": "baccarat", "state": "shuffle", "shoe": 0, "coup": 0, "results": []})
        driver.get(board.url)
        deadline = time.monotonic() + WAIT_S
        while driver.execute_script("return Number(document.body.dataset.version||0)") < 1:
            if time.monotonic() > deadline:
                raise RuntimeError("the page never showed its first version")
            time.sleep(0.05)
        time.sleep(0.5)
        for kind, view in shoe_views(shoe, extra):
            before = metrics(driver)
            version = loop.show(view)
            time.sleep(SETTLE_S)
            after = metrics(driver)
            deadline = time.monotonic() + WAIT_S
            while (
                driver.execute_script("return Number(document.body.dataset.version||0)") < version
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the page never showed version {version}")
                time.sleep(0.05)
                after = metrics(driver)  # late: this sample includes the polling (rare)
            script = (after["ScriptDuration"] - before["ScriptDuration"]) * 1000
            style = (
                after["RecalcStyleDuration"]
                - before["RecalcStyleDuration"]
                + after["LayoutDuration"]
                - before["LayoutDuration"]
            ) * 1000
            timed = driver.execute_script(
                "const t = window.__bench; window.__bench = []; return t;"
            )
            handler, frame = timed[-1] if timed else (float("nan"), float("nan"))
            samples[kind].append((handler, frame, script, style))
    finally:
        board.close()
        loop.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=5324)
    parser.add_argument("--size", default="1920x1080")
    args = parser.parse_args()
    from tests.services.chromium import ChromiumBrowser

    size = tuple(int(x) for x in args.size.split("x"))
    shoe = dealt_shoe(args.seed)
    browser = ChromiumBrowser.create()
    print(f"browser {browser.version}; shoe of {len(shoe)} coups (seed {args.seed}); {args.size}")
    full_medians = []
    try:
        for run in range(1, args.runs + 1):
            samples = one_run(browser, shoe, size)  # type: ignore[arg-type]
            browser.quit_all()
            full = samples["result"][-10:]

            def col(rows: list[tuple[float, ...]], i: int) -> str:
                values = [r[i] for r in rows]
                return f"{statistics.median(values):.2f} / {max(values):.2f}"

            full_medians.append(statistics.median(r[0] for r in full))
            print(
                f"run {run}: full shoe (last 10 results), median / max ms: render handler"
                f" {col(full, 0)}, event to next frame {col(full, 1)}, CDP script"
                f" {col(full, 2)}, CDP style+layout {col(full, 3)}; every result: handler"
                f" {col(samples['result'], 0)}; state versions: handler"
                f" {col(samples['state'], 0)}"
            )
    finally:
        browser.quit_all()
    print(
        f"monitor render script median {statistics.median(full_medians):.2f} ms"
        f" (median of {args.runs} runs' full-shoe medians; runs"
        f" {' / '.join(f'{m:.2f}' for m in full_medians)})"
    )


if __name__ == "__main__":
    main()
