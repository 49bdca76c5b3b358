"""The direct read from an object store against the same read from local files.

Usage::

    python bench/object_store_read.py --repeats 5 --results bench/RESULTS_OBJECT_STORE.md

The benchmark's 10M-row Parquet run and its qrels (``bench_evaluate.py``'s, cached
under ``--work``) are uploaded to a bucket of a real S3-protocol server on 127.0.0.1
(moto's server mode, on the same machine). The whole ``sparkeval evaluate`` process
is then timed on (A) the local files and (B) their ``s3://`` URIs, in the order
A B A B ..., with the same measures, output directory kind (local) and environment,
so only the read differs; both must give the same summary.json measures. Every
process maps the class archive a user's first run builds (as in
``bench_evaluate.py``). The server's request log gives the HTTP requests of each
s3 run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

from bench_evaluate import (  # noqa: E402
    base_env,
    command,
    first_run_archive,
    inner_seconds,
    median_cell,
    results_header,
    run_measured,
)
from synthetic import generate  # noqa: E402

BUCKET = "sparkeval-bench"
TARGET = 1.5
#: the store's settings, as users set them (moto takes any keys); no metadata service
AWS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench-secret",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def cached_inputs(work: Path, queries: int, docs: int) -> tuple[Path, Path]:
    """The run and qrels of ``generate``, written once into ``work/QxD``."""
    directory = work / f"{queries}x{docs}"
    run, qrels = directory / "run.parquet", directory / "qrels.parquet"
    try:
        pq.read_metadata(run), pq.read_metadata(qrels)  # a partly written file has no footer
    except (OSError, pa.ArrowException):
        generate(directory, queries, docs)
    return run, qrels


@contextmanager
def moto_server(log: Path):
    """A moto S3 server on a free port of 127.0.0.1 (its request log in ``log``); yields
    its endpoint URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with open(log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"moto server did not start: {log.read_text()[-2000:]}"
                    ) from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)


def upload(endpoint: str, files: list[Path]) -> list[str]:
    """Copy ``files`` into the bucket; their ``s3://`` URIs."""
    s3 = pafs.S3FileSystem(
        endpoint_override=endpoint,
        allow_bucket_creation=True,
        region=AWS["AWS_REGION"],
        access_key=AWS["AWS_ACCESS_KEY_ID"],
        secret_key=AWS["AWS_SECRET_ACCESS_KEY"],
    )
    s3.create_dir(BUCKET)
    uris = []
    for file in files:
        key = f"{BUCKET}/{file.parent.name}/{file.name}"
        pafs.copy_files(str(file), key, destination_filesystem=s3)
        uris.append(f"s3://{key}")
    return uris


def requests(log: Path, start: int) -> tuple[Counter, int]:
    """The HTTP methods of the requests logged after line ``start``, and the line count."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace")).splitlines()
    methods = Counter(
        line.split('"', 2)[1].split()[0] for line in lines[start:] if ' HTTP/1.1" ' in line
    )
    return methods, len(lines)


def measures(out: Path) -> dict:
    runs = json.loads((out / "summary.json").read_text())["runs"]
    return {name: run["measures"] for name, run in runs.items()}


def memory_gib() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x100", help="QUERIESxDOCS")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--work", type=Path, default=None, help="inputs cached here")
    parser.add_argument("--results", type=Path, default=None, help="write the table here")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="sparkeval-s3-"))
    work.mkdir(parents=True, exist_ok=True)
    queries, docs = (int(x) for x in args.size.lower().split("x"))
    local = cached_inputs(work, queries, docs)
    env = {**base_env(), **first_run_archive(work)[0], **AWS}
    walls: dict[str, list[float]] = {"local": [], "s3": []}
    inners: dict[str, list[float]] = {"local": [], "s3": []}
    calls: list[Counter] = []
    loads: list[float] = []  # the machine is shared: its 1-minute load after each run
    log = work / "moto.log"
    with moto_server(log) as endpoint:
        started = time.perf_counter()
        remote = upload(endpoint, list(local))
        print(f"uploaded to {endpoint} in {time.perf_counter() - started:.1f} s", flush=True)
        env["AWS_ENDPOINT_URL"] = endpoint
        expected = None
        for rep in range(args.repeats):
            for system, (run, qrels) in (("local", local), ("s3", remote)):
                out = work / f"out-{system}"
                _, lines = requests(log, 0)
                cmd = command("sparkeval", run, qrels, out)
                wall, _, stdout, stderr = run_measured(cmd, env, BENCH)
                walls[system].append(wall)
                loads.append(os.getloadavg()[0])
                inners[system].append(inner_seconds("sparkeval", stdout, stderr) or float("nan"))
                found = measures(out)
                expected = expected or found
                if found != expected:
                    raise SystemExit(f"{system}: measures differ:\n{found}\n{expected}")
                made = ""
                if system == "s3":
                    calls.append(requests(log, lines)[0])
                    made = f"  {sum(calls[-1].values())} requests {dict(calls[-1])}"
                print(
                    f"  rep {rep + 1} {system:<5} wall {wall:6.1f}s load {loads[-1]:.1f}{made}",
                    flush=True,
                )
    text = "\n".join(results_text(args, queries, docs, walls, inners, calls, loads)) + "\n"
    print(text)
    if args.results:
        args.results.write_text(text)


def results_text(args, queries, docs, walls, inners, calls, loads) -> list[str]:
    ratio = statistics.median(walls["s3"]) / statistics.median(walls["local"])
    pairs = statistics.median(s / a for a, s in zip(walls["local"], walls["s3"], strict=True))
    per_run = Counter({k: statistics.median(c[k] for c in calls) for k in set().union(*calls)})
    lines = [
        *results_header(
            "# Reading the inputs from an object store",
            "bench/object_store_read.py",
            f", {memory_gib():.0f} GiB memory; {datetime.date.today().isoformat()}; local[2]; "
            f"{args.repeats} alternating repetitions (local, s3, local, s3, ...). Wall = the "
            "whole `sparkeval evaluate` process (JVM start included; every process maps the "
            "class archive a first run builds); inner = from the session's start to the "
            "outputs. The s3 inputs are the same files in a bucket of moto's S3 server "
            "(`python -m moto.server`, single process, on this machine's cores too); the "
            "outputs are local in both. The machine is shared: its 1-minute load average "
            f"after the runs was {median_cell(loads)} (median, min–max) on "
            f"{os.cpu_count()} cores.",
        ),
        "",
        f"### {queries:,} queries × {docs} docs = {queries * docs:,} run rows, Parquet",
        "",
        "| input | min s | median s | max s | median inner s | HTTP requests per run |",
        "|---|---|---|---|---|---|",
    ]
    for system in ("local", "s3"):
        w = walls[system]
        made = "-"
        if system == "s3":
            kinds = ", ".join(f"{k} {v:.0f}" for k, v in per_run.most_common())
            made = f"{sum(per_run.values()):.0f} ({kinds})"
        lines.append(
            f"| {system} | {min(w):.1f} | {statistics.median(w):.1f} | {max(w):.1f} | "
            f"{statistics.median(inners[system]):.1f} | {made} |"
        )
    lines += [
        "",
        f"- s3 / local, ratio of medians: {ratio:.2f}× (target ≤ {TARGET}×): "
        f"{'met' if ratio <= TARGET else 'NOT met'}",
        f"- s3 / local, median of the {len(walls['s3'])} pair-by-pair ratios: {pairs:.2f}×",
        f"- wall, median (min–max): local {median_cell(walls['local'])} s, "
        f"s3 {median_cell(walls['s3'])} s; both gave the same summary.json measures",
    ]
    return lines


if __name__ == "__main__":
    main()
