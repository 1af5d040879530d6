#!/usr/bin/env python3
"""Whole-process benchmarks of the atlas-bench CLI, side by side (docs/PERF.md, "CLI start-up").

  startup   `atlas-bench --help`, `diff --help`, `baseline show --help`: wall time and peak RSS
            of the whole process (fork to exit), against `true` for the floor of process start.
  generate  `atlas-bench generate` to the end of stories260K's 512-token context (CPU, one
            thread, greedy, prompt "Tom": 510 new tokens; llama2.c: 511 steps) against
            llama2.c's run.c built with -O3 -march=native, interleaved run by run so both see
            the same box; the two texts are checked identical first.

Each figure is the median of --runs runs (and the min/max). Wall time is time.perf_counter()
around fork/exec/wait; RSS is ru_maxrss from wait4() of that child alone.

  tools/bench-cli.py startup  --exe build/tools/atlas-bench
  tools/bench-cli.py generate --exe build/tools/atlas-bench --run-c path/to/llama2.c/run.c
      [--data-dir DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


RSS_FILE = os.path.join(tempfile.gettempdir(), f"bench-cli-rss-{os.getpid()}")


def run_once(argv, env=None):
    """(wall seconds, user+sys seconds, peak RSS in KiB) of one run of argv; output discarded.

    The command runs under GNU time (/usr/bin/time -f %M) for its peak RSS: a child forked from
    this Python process would report Python's RSS (the high-water mark survives exec). time's
    own start (about 0.5 ms) is in every wall figure, the `true` floor included."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            timed = ["/usr/bin/time", "-f", "%M", "-o", RSS_FILE] + argv
            os.execve(timed[0], timed, env if env is not None else os.environ)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-cli: {' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    with open(RSS_FILE) as f:
        rss_kib = int(f.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss_kib


def summary(name, samples):
    wall = [s[0] * 1e3 for s in samples]
    cpu = [s[1] * 1e3 for s in samples]
    rss = [s[2] / 1024 for s in samples]
    print(f"{name:<44} wall median {statistics.median(wall):8.2f} ms (min {min(wall):.2f}, max {max(wall):.2f})"
          f"  cpu {statistics.median(cpu):8.2f} ms  RSS {statistics.median(rss):7.1f} MiB")
    return statistics.median(wall)


def interleaved(commands, runs, warmup=2):
    """Runs each command `warmup` times unmeasured, then `runs` rounds of all commands in turn."""
    for _ in range(warmup):
        for argv in commands.values():
            run_once(argv)
    samples = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(run_once(argv))
    return samples


def startup(args):
    commands = {"true (process start floor)": [shutil.which("true")]}
    exes = [("", os.path.abspath(args.exe))]
    if args.before:
        exes.insert(0, ("before: ", os.path.abspath(args.before)))
    for label, exe in exes:
        commands[label + "atlas-bench --help"] = [exe, "--help"]
        commands[label + "atlas-bench diff --help"] = [exe, "diff", "--help"]
        commands[label + "atlas-bench baseline show --help"] = [exe, "baseline", "show", "--help"]
    samples = interleaved(commands, args.runs)
    for name, s in samples.items():
        summary(name, s)


def generate(args):
    exe = os.path.abspath(args.exe)
    data_dir = args.data_dir or subprocess.run([args.exe, "data", "dir"], check=True, capture_output=True,
                                               text=True).stdout.strip()
    model_dir = os.path.join(data_dir, "models", "stories260K")
    model = os.path.join(model_dir, "stories260K.bin")
    tok = os.path.join(model_dir, "tok512.bin")
    build = tempfile.mkdtemp(prefix="bench-cli-")
    run_bin = os.path.join(build, "run")
    subprocess.run(["gcc", "-O3", "-march=native", "-o", run_bin, args.run_c, "-lm"], check=True)
    # Greedy from "Tom" to the end of the 512-token context on both sides: llama2.c runs 511
    # forward steps (-n 512), atlas-bench prefills 3 prompt tokens and decodes 510 new ones.
    # (From an empty prompt both stop at a BOS/EOS token after 345 tokens.)
    llama2c = [run_bin, model, "-z", tok, "-t", "0", "-n", "512", "-i", args.prompt]
    ours = [exe, "generate", "--model", model, "--prompt", args.prompt, "--max-tokens", "511", "--threads", "1"]
    commands = {"llama2.c run.c -O3 -march=native": llama2c, "atlas-bench generate --threads 1": ours}
    if args.before:
        commands["before: atlas-bench generate --threads 1"] = [os.path.abspath(args.before)] + ours[1:]
    # Same work on both sides, checked once outside the timing: the same text, to the context's end.
    import json
    out = json.loads(subprocess.run(ours + ["--json"], capture_output=True, text=True, check=True).stdout)
    ref_text = subprocess.run(llama2c, capture_output=True, text=True, check=True).stdout.strip()
    same = ref_text.endswith(out["text"].strip())
    print(f"atlas-bench: {len(out['prompt_ids'])} prompt + {len(out['output_ids'])} new tokens, stop {out['stop']}; "
          f"text identical to llama2.c's: {same}")
    if not same:
        sys.exit("bench-cli: the two programs generated different text; the comparison would be unfair")
    samples = interleaved(commands, args.runs)
    medians = {name: summary(name, s) for name, s in samples.items()}
    ref, mine = medians["llama2.c run.c -O3 -march=native"], medians["atlas-bench generate --threads 1"]
    cpu = {name: statistics.median(x[1] for x in s) for name, s in samples.items()}
    print(f"speed-up, llama2.c / atlas-bench medians: wall {ref / mine:.2f}x, cpu "
          f"{cpu['llama2.c run.c -O3 -march=native'] / cpu['atlas-bench generate --threads 1']:.2f}x")
    shutil.rmtree(build)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("startup")
    s.add_argument("--exe", default="build/tools/atlas-bench")
    s.add_argument("--runs", type=int, default=30)
    s.add_argument("--before", help="another atlas-bench to run side by side (e.g. a build of the previous commit)")
    g = sub.add_parser("generate")
    g.add_argument("--exe", default="build/tools/atlas-bench")
    g.add_argument("--run-c", required=True, help="llama2.c's run.c")
    g.add_argument("--data-dir", help="default: the --exe's own answer (`atlas-bench data dir`: $ATLAS_DATA_DIR, "
                   "else ../shared/data beside its checkout, else ./data; docs/environment.md)")
    g.add_argument("--runs", type=int, default=15)
    g.add_argument("--prompt", default="Tom")
    g.add_argument("--before", help="another atlas-bench to run side by side")
    args = p.parse_args()
    (startup if args.what == "startup" else generate)(args)


if __name__ == "__main__":
    main()
