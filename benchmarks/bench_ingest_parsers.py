"""Parsers for style-carrying votes, side by side: the parse + validate step of ``arena ingest``.

Run from the repository root (pip install orjson msgspec pyarrow polars first)::

    python benchmarks/bench_ingest_parsers.py                 # 1M rows, 2 repetitions
    python benchmarks/bench_ingest_parsers.py --rows 200000 --reps 1

Two files of ``--rows`` rows, made once under ``--work`` (default
/tmp/arena-bench-parsers): the bundled ko-arena-hard judgments repeated with
new ids (JSON lines in LMArena's shape, nested ``conv_metadata``; 4,000 of
each 76,000 rows have none), and the same rows as LMArena's CSV shape with
flat ``conv_metadata.*`` sub-count columns (``pandas.json_normalize``'s
names; empty cells where a row has no metadata).

Each parser runs in a fresh process, the parsers alternating (order reversed
every repetition) so that load on a shared machine falls on all of them.
Only the parse + validate step is timed: the file's records become
normalised battles (or column blocks) through the ingester's own column
validators (``arena.ingest.chunks.read_chunks``), with the JSON decoder or
the CSV reader swapped; a digest of everything they give must be identical
for every parser of one file (else the run fails).

- JSON lines: ``json`` (standard library, one call per block), ``orjson``
  (per line), ``msgspec`` (one call per block), ``pyarrow`` (``pyarrow.json``
  per block, rows back as dicts), ``polars`` (``read_ndjson`` per block).
- CSV: ``csv`` (the ingester's reader), ``pyarrow`` (``pyarrow.csv``, every
  column as text), ``polars`` (``read_csv``, every column as text).

Prints rows/s (wall and CPU) and peak RSS per parser, and the load average.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KO = ROOT / "arena" / "data" / "ko-arena-hard-battles.jsonl.gz"
JSON_PARSERS = ("json", "orjson", "msgspec", "pyarrow", "polars")
CSV_PARSERS = ("csv", "pyarrow", "polars")
BLOCK = 20_000  # the ingester's chunk (arena.ingest.loader.CHUNK_ROWS)
_SUBS = {
    "header_count": ("h1", "h2", "h3", "h4", "h5", "h6"),
    "list_count": ("ordered", "unordered"),
    "bold_count": ("**", "__"),
}
_WINNER = {"A>>B": "model_a", "A>B": "model_a", "A=B": "tie", "B>A": "model_b", "B>>A": "model_b"}


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# ---------------------------------------------------------------- the files
def make_files(work: Path, rows: int) -> tuple[Path, Path]:
    jsonl, csv_path = work / f"ko_{rows}.jsonl", work / f"ko_{rows}.csv"
    if jsonl.exists() and csv_path.exists():
        return jsonl, csv_path
    work.mkdir(parents=True, exist_ok=True)
    lines = gzip.open(KO, "rb").read().splitlines()
    records = [json.loads(line) for line in lines]
    pat = re.compile(rb'"id": "([^"]*)"')
    header = ["id", "model_a", "model_b", "winner"]
    for side in "ab":
        header.append(f"conv_metadata.sum_assistant_{side}_tokens")
        for key, subs in _SUBS.items():
            header.extend(f"conv_metadata.{key}_{side}.{sub}" for sub in subs)
    with open(jsonl, "wb") as fj, open(csv_path, "w") as fc:
        fc.write(",".join(header) + "\n")
        done = rep = 0
        while done < rows:
            k = min(len(lines), rows - done)
            tag = b':r%d"' % rep
            fj.write(
                b"\n".join(
                    pat.sub(lambda m, tag=tag: b'"id": "' + m.group(1) + tag, line, count=1)
                    for line in lines[:k]
                )
                + b"\n"
            )
            out = []
            for rec in records[:k]:
                row = [
                    f"{rec['id']}:r{rep}",
                    rec["model_a"],
                    rec["model_b"],
                    _WINNER[rec["verdict"]],
                ]
                meta = rec.get("conv_metadata")
                for side in "ab":
                    if meta is None:
                        row.extend([""] * 11)
                        continue
                    row.append(str(meta[f"sum_assistant_{side}_tokens"]))
                    for key, subs in _SUBS.items():
                        row.extend(str(meta[f"{key}_{side}"][sub]) for sub in subs)
                out.append(",".join(row) + "\n")
            fc.write("".join(out))
            done += k
            rep += 1
    return jsonl, csv_path


# ---------------------------------------------------------------- one parser, one process
def _arrow_rows(texts: list[str]):
    import pyarrow.json as pj

    try:
        table = pj.read_json(io.BytesIO("".join(texts).encode()))
    except Exception:  # noqa: BLE001 -- any failure: the standard library decides
        return None
    rows = table.to_pylist()
    return rows if len(rows) == len(texts) else None


def _polars_rows(texts: list[str]):
    import polars as pl

    try:
        frame = pl.read_ndjson(io.BytesIO("".join(texts).encode()))
    except Exception:  # noqa: BLE001
        return None
    rows = frame.to_dicts()
    return rows if len(rows) == len(texts) else None


def _msgspec_rows(texts: list[str]):
    import msgspec

    try:
        objects = msgspec.json.decode("[" + ",".join(texts) + "]")
    except (msgspec.DecodeError, RecursionError):
        return None
    return objects if len(objects) == len(texts) else None


def _digest_chunk(h, chunk) -> None:
    """One line per battle or error, whatever the chunking: (id, models, outcome, weight,
    question, judge, excluded, style counts), or (location, error)."""
    battles = chunk.columns.battles() if chunk.columns is not None else chunk.battles
    out = [
        (
            b.external_id,
            b.model_a,
            b.model_b,
            b.outcome,
            b.weight,
            b.question,
            b.judge,
            b.excluded_reason,
            b.style.counts if b.style is not None else None,
        )
        for b in battles
    ]
    out.extend((str(w), str(e)) for w, e, _ in chunk.errors)
    h.update("".join(f"{r!r}\n" for r in out).encode())


def _csv_blocks(path: Path, reader: str):
    """(line numbers, columns) per block of BLOCK rows, read by pyarrow or polars as text."""
    from arena.ingest.csv_blocks import CsvBlock

    with open(path, "rb") as fh:
        header = fh.readline()
        names = [h.strip() for h in header.decode().rstrip("\n").split(",")]
        line = 1
        while True:
            lines = fh.readlines(BLOCK * 200)
            if not lines:
                return
            data = header + b"".join(lines)
            if reader == "pyarrow":
                import pyarrow as pa
                import pyarrow.csv as pc

                table = pc.read_csv(
                    io.BytesIO(data),
                    convert_options=pc.ConvertOptions(
                        column_types={n: pa.string() for n in names}, strings_can_be_null=False
                    ),
                )
                columns = [table.column(n).to_pylist() for n in names]
            else:
                import polars as pl

                frame = pl.read_csv(
                    io.BytesIO(data), infer_schema=False, empty_string_is_null=False
                )
                columns = [frame.get_column(n).fill_null("").to_list() for n in names]
            numbers = list(range(line + 1, line + 1 + len(lines)))
            line += len(lines)
            yield names, CsvBlock(numbers, columns=columns)


def one(parser: str, path: Path) -> dict:
    import gc

    gc.disable()  # as the ingester does while it reads a file
    from arena.ingest import json_lines
    from arena.ingest.chunks import read_chunks
    from arena.ingest.records import csv_block_parser, csv_parser, resolve_schema
    from arena.ingest.sources import detect_format, open_binary, open_input

    json_lines.BLOCK_DECODERS.update(
        {"msgspec": _msgspec_rows, "pyarrow": _arrow_rows, "polars": _polars_rows}
    )
    h = hashlib.sha256()
    rows = errors = 0
    seconds = cpu = 0.0
    src = open_input(str(path))
    fmt = detect_format(src, "auto")

    def chunks():
        if fmt == "jsonl" or parser == "csv":
            with open_binary(src) as binary:
                yield from read_chunks(
                    src,
                    fmt,
                    binary,
                    {},
                    100,
                    rows=BLOCK,
                    decoder=parser if fmt == "jsonl" else None,
                )
            return
        from arena.ingest.chunks import Chunk

        schema = block_parser = row_parser = None
        for names, block in _csv_blocks(path, parser):
            if schema is None:
                schema = resolve_schema(names, {}, max_expand=100)
                block_parser, row_parser = (
                    csv_block_parser(schema, names),
                    csv_parser(schema, names),
                )
            columns = block_parser(block)
            chunk = Chunk(columns=columns, rows_read=len(block))
            if columns is None:  # as the ingester does: that block row by row
                chunk = Chunk()
                for row in block.all_rows():
                    chunk.rows_read += 1
                    chunk.battles.append(row_parser(row))
            yield chunk

    it = chunks()
    while True:  # only the parse + validate step is timed, not the digest
        c0, t0 = time.process_time(), time.perf_counter()
        chunk = next(it, None)
        seconds, cpu = seconds + time.perf_counter() - t0, cpu + time.process_time() - c0
        if chunk is None:
            break
        rows += chunk.rows_read
        errors += len(chunk.errors)
        _digest_chunk(h, chunk)
    # this process's own peak (ru_maxrss would include the parent's, from before exec)
    status = Path("/proc/self/status").read_text()
    peak = int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024
    return {
        "rows": rows,
        "errors": errors,
        "seconds": seconds,
        "cpu": cpu,
        "peak_mb": peak,
        "digest": h.hexdigest()[:16],
    }


# ---------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("/tmp/arena-bench-parsers"))
    ap.add_argument("--only", default="", help="comma-separated parsers (default: all)")
    ap.add_argument("--one", nargs=2, metavar=("PARSER", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], Path(args.one[1]))))
        return
    t0 = time.perf_counter()
    jsonl, csv_path = make_files(args.work, args.rows)
    print(
        f"bench_ingest_parsers: {os.cpu_count()} CPUs, {load()}; files "
        f"({time.perf_counter() - t0:.0f} s): {jsonl} ({jsonl.stat().st_size / 2**20:.0f} MiB), "
        f"{csv_path} ({csv_path.stat().st_size / 2**20:.0f} MiB)",
        flush=True,
    )
    only = set(filter(None, args.only.split(",")))
    plan = [(jsonl, p) for p in JSON_PARSERS] + [(csv_path, p) for p in CSV_PARSERS]
    plan = [(f, p) for f, p in plan if not only or p in only]
    results: dict[tuple[str, str], list[dict]] = {}
    for rep in range(args.reps):
        for path, parser in plan if rep % 2 == 0 else plan[::-1]:
            out = subprocess.run(
                [sys.executable, __file__, "--one", parser, str(path)],
                capture_output=True,
                text=True,
            )
            if out.returncode != 0:
                raise SystemExit(f"{parser} on {path.name} failed:\n{out.stderr}")
            r = json.loads(out.stdout)
            r["load"] = os.getloadavg()[0]
            results.setdefault((path.suffix[1:], parser), []).append(r)
            print(
                f"  rep {rep + 1} {path.suffix[1:]:5} {parser:8} {r['seconds']:6.1f} s "
                f"{r['rows'] / r['seconds']:9,.0f} rows/s  CPU {r['cpu']:6.1f} s  "
                f"{r['peak_mb']:5.0f} MB  digest {r['digest']}  ({load()})",
                flush=True,
            )
    print(
        "\n| file | parser | rows/s (best wall) | rows/s (best CPU) | median s | peak MB | "
        "same result |\n|---|---|---:|---:|---:|---:|---|"
    )
    failed = []
    for kind in ("jsonl", "csv"):
        ref = None
        for (k, parser), runs in results.items():
            if k != kind:
                continue
            digests = {r["digest"] for r in runs}
            ref = ref or next(iter(digests))
            same = digests == {ref}
            if not same:
                failed.append(f"{kind}/{parser}")
            rows = runs[0]["rows"]
            print(
                f"| {kind} | {parser} | {rows / min(r['seconds'] for r in runs):,.0f} | "
                f"{rows / min(r['cpu'] for r in runs):,.0f} | "
                f"{statistics.median(r['seconds'] for r in runs):.1f} | "
                f"{max(r['peak_mb'] for r in runs):.0f} | {'yes' if same else 'NO'} |"
            )
    print(f"\n({args.rows:,} rows per file; {load()})")
    if failed:
        raise SystemExit(f"different results: {', '.join(failed)}")


if __name__ == "__main__":
    main()
