"""`make test`: every stage CI runs, each timed, none hidden by another's failure.

    python3 -m tests.stages [--jobs N] [--busy N] [STAGE ...]

A stage is a make target. It starts once every stage it needs has passed, at most --jobs at a time
(three by default: installs wait on the network, the browsers, the matrix and the consumers on
servers and pauses, and many checks use one core, so three keep two cores busy), and never beside a
stage that shares its build folder. Its output goes to
build/stages/<stage>.log. A failed stage does not stop the others; a stage that needs it is not
run, and says which. At the end come a table of every stage's wall time and result, then the end of
each failed stage's log; the exit status is 1 if any stage failed. --busy N keeps N processes
spinning on the CPU meanwhile (`make test-under-load`): what passes must pass on a machine that is
busy with other work.

Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "build" / "stages"
TAIL = 80  # lines of a failed stage's log printed at the end


@dataclass(frozen=True)
class Stage:
    name: str
    target: str
    needs: tuple[str, ...] = ()
    # Stages naming the same folder never run at once (two Maven builds in java/target would each
    # see the other's half-written classes).
    folder: str = ""


PY, DEB, NPM, DEPS = "install python", "install debian", "install npm", "install proto deps"
GO, RUST = "install go", "install rust"

# In order of priority: a stage that is ready starts before those listed after it, so the long ones
# (the Python suite, the matrix, Rust's compiles) come first.
STAGES = [
    Stage(PY, "setup"),
    Stage(DEB, "debian-setup"),
    Stage(NPM, "npm-setup"),
    Stage(RUST, "rust-tools", (PY,)),
    Stage(GO, "go-tools", (PY,)),
    Stage(DEPS, "proto-deps", (PY,), folder="java"),
    Stage("test python", "pytest", (PY, DEB, NPM, GO)),
    Stage("conformance", "conformance", (PY, NPM, RUST, GO, DEPS), folder="java"),
    Stage("lint rust", "lint-rust", (RUST,)),
    Stage("test rust", "rust-test", (PY, RUST)),
    Stage("test browsers", "browser-test", (PY, DEB, NPM)),
    Stage("check generate", "check-generate", (PY, NPM, GO, DEPS)),
    Stage("lint python", "lint-python", (PY,)),
    Stage("lint proto", "lint-proto", (PY, DEPS)),
    Stage("lint typescript", "lint-typescript", (NPM,)),
    Stage("lint go", "lint-go", (GO,)),
    Stage("lint java", "lint-java", (DEPS,), folder="java"),
    Stage("check ui", "check-ui", (NPM,)),
    Stage("test typescript", "ts-test", (PY, NPM)),
    Stage("test go", "go-test", (PY,)),
    Stage("test java", "java-test", (PY, DEPS), folder="java"),
    Stage("consumer python", "consumer-python", (PY, NPM, "check ui")),
    Stage("consumer typescript", "consumer-typescript", (PY, NPM)),
    Stage("consumer go", "consumer-go", (PY,)),
    Stage("consumer rust", "consumer-rust", (PY, RUST)),
    Stage("consumer java", "consumer-java", (PY, DEPS), folder="java"),
    Stage("consumer c++", "consumer-cpp", (PY, DEB, DEPS)),
]


@dataclass
class Result:
    status: str  # passed, failed, not run
    seconds: float = 0.0
    cpu: float = 0.0  # seconds of CPU, user and system
    summary: str = ""


def last_line(log: Path) -> str:
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run(stage: Stage) -> Result:
    log = LOGS / f"{stage.target}.log"
    started = time.monotonic()
    with log.open("wb") as out:
        # No terminal, and SIGINT left as this process has it: make passes it on to its children.
        command = ["make", stage.target]
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        # wait4 gives the CPU time of make and of every process it waited for: the stage's own.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime
    return Result("passed" if process.returncode == 0 else "failed", seconds, cpu, last_line(log))


def schedule(stages: list[Stage], jobs: int) -> dict[str, Result]:
    results: dict[str, Result] = {}
    running: dict[str, Stage] = {}
    done = threading.Condition()
    began = time.monotonic()

    def clock() -> str:
        return f"[{time.monotonic() - began:6.0f}s]"

    def work(stage: Stage) -> None:
        result = run(stage)
        with done:
            results[stage.name] = result
            del running[stage.name]
            print(f"{clock()} {result.status}: {stage.name} ({result.seconds:.0f} s)", flush=True)
            done.notify()

    waiting = list(stages)
    with done:
        while waiting or running:
            for stage in list(waiting):
                failed = [need for need in stage.needs if need in results and results[need].status != "passed"]
                if failed:
                    waiting.remove(stage)
                    results[stage.name] = Result("not run", summary=f"needs {', '.join(failed)}")
                    continue
                if len(running) >= jobs or any(need not in results for need in stage.needs):
                    continue
                if stage.folder and any(other.folder == stage.folder for other in running.values()):
                    continue
                waiting.remove(stage)
                running[stage.name] = stage
                print(f"{clock()} start: {stage.name} (make {stage.target})", flush=True)
                threading.Thread(target=work, args=(stage,), daemon=True).start()
            if running:
                done.wait()
    return results


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def report(stages: list[Stage], results: dict[str, Result], wall: float) -> str:
    width = max(len(stage.name) for stage in stages)
    lines = [
        f"| {'stage':<{width}} | wall    | cpu     | result  | last line of its log",
        f"|{'-' * (width + 2)}|---------|---------|---------|---",
    ]
    for stage in stages:
        result = results[stage.name]
        ran = result.status != "not run"
        wall_time, cpu_time = (minutes(result.seconds), minutes(result.cpu)) if ran else ("-", "-")
        lines.append(
            f"| {stage.name:<{width}} | {wall_time:>7} | {cpu_time:>7} | {result.status:<7} | {result.summary[:60]}"
        )
    busy = sum(result.seconds for result in results.values())
    cpu = sum(result.cpu for result in results.values())
    lines.append(
        f"\nmake test: {minutes(wall)} wall; stages ran {minutes(busy)} ({busy / wall:.2f} at once on average)"
        f" and used {minutes(cpu)} of CPU ({cpu / wall:.2f} cores on average)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    jobs = int(os.environ.get("STAGE_JOBS", "3"))
    parser.add_argument("--jobs", type=int, default=jobs, help="stages at once (default: STAGE_JOBS, else 3)")
    parser.add_argument("--busy", type=int, default=0, help="processes that keep a core busy meanwhile")
    parser.add_argument("stage", nargs="*", help="run only these stages (and nothing they need)")
    args = parser.parse_args(argv)
    names = {stage.name for stage in STAGES}
    unknown = [name for name in args.stage if name not in names]
    if unknown:
        parser.error(f"no stage {unknown}: the stages are {sorted(names)}")
    chosen = [stage for stage in STAGES if not args.stage or stage.name in args.stage]
    if args.stage:  # what the chosen stages need is taken as done
        chosen = [
            Stage(stage.name, stage.target, tuple(need for need in stage.needs if need in args.stage), stage.folder)
            for stage in chosen
        ]
    LOGS.mkdir(parents=True, exist_ok=True)
    spin = [sys.executable, "-c", "while True: pass"]
    busy = [subprocess.Popen(spin) for _ in range(args.busy)]
    began = time.monotonic()
    try:
        results = schedule(chosen, max(1, args.jobs))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print("\n" + report(chosen, results, time.monotonic() - began))
    failed = [stage for stage in chosen if results[stage.name].status == "failed"]
    for stage in failed:
        log = LOGS / f"{stage.target}.log"
        lines = log.read_text(errors="replace").splitlines()
        shown = min(TAIL, len(lines))
        print(f"\n==== {stage.name} failed (make {stage.target}): the last {shown} lines of {log.relative_to(ROOT)}")
        print("\n".join(lines[-TAIL:]))
    not_run = [stage.name for stage in chosen if results[stage.name].status == "not run"]
    if failed or not_run:
        failures = ", ".join(stage.name for stage in failed) or "none"
        print(f"\nfailed: {failures}; not run: {', '.join(not_run) or 'none'}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
