#!/usr/bin/env python3
"""bench/report.py RESULTS_CSV RESULTS_DIR: the table and chart of bench/run-all.sh.

Reads the rows the benches appended (figure,value,unit,reference,reference_value,ratio,goal),
prints them as a table, writes table.md and, when gnuplot is installed, chart.png (each
figure's ratio to its reference, with its goal). Standard library only (Debian's python3).
"""
import csv
import os
import shutil
import subprocess
import sys


def meets(ratio, goal):
    """'yes'/'no' for a goal such as '<=2.0x' or '>=0.8x', '' when there is none."""
    goal = goal.strip()
    if not goal:
        return ""
    try:
        bound = float(goal[2:].rstrip("x"))
    except ValueError:
        return ""
    if goal.startswith("<="):
        return "yes" if ratio <= bound else "no"
    if goal.startswith(">="):
        return "yes" if ratio >= bound else "no"
    return ""


def number(text):
    """A float, or None for a field a bench left without one ('-' or empty)."""
    try:
        return float(text)
    except ValueError:
        return None


def main():
    csv_path, out_dir = sys.argv[1], sys.argv[2]
    rows = []
    with open(csv_path, newline="") as f:
        for r in csv.reader(f):
            if len(r) != 7:
                continue
            figure, value, unit, reference, ref_value, ratio, goal = r
            if number(value) is None:
                continue
            rows.append({"figure": figure, "value": float(value), "unit": unit, "reference": reference,
                         "ref_value": number(ref_value), "ratio": number(ratio), "goal": goal})
    header = ["figure", "codexd", "reference", "ratio", "goal", "met"]
    lines = []
    for r in rows:
        if not r["reference"] or r["reference"] == "-" or not r["ref_value"] or r["ratio"] is None:
            lines.append([r["figure"], f'{r["value"]:.3f} {r["unit"]}', "-", "-", r["goal"], ""])
            continue
        lines.append([r["figure"], f'{r["value"]:.3f} {r["unit"]}', f'{r["reference"]}: {r["ref_value"]:.3f} {r["unit"]}',
                      f'{r["ratio"]:.2f}x', r["goal"], meets(r["ratio"], r["goal"])])
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(header)]
    print("\n==== summary (medians; ratio = codexd / reference)")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for l in lines:
        print("  ".join(c.ljust(w) for c, w in zip(l, widths)))
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
        for l in lines:
            f.write("| " + " | ".join(c.replace("|", "/") for c in l) + " |\n")
    if not rows or shutil.which("gnuplot") is None:
        print("(no chart: gnuplot is not installed; apt-get install gnuplot-nox)" if rows else "(no rows, no chart)")
        return
    rows = [r for r in rows if r["ratio"] and r["ref_value"] and r["reference"] not in ("", "-")]  # ratios only
    data = os.path.join(out_dir, "chart.dat")
    with open(data, "w") as f:
        for i, r in enumerate(rows):
            bound = ""
            g = r["goal"].strip()
            if g[:2] in ("<=", ">="):
                bound = g[2:].rstrip("x")
            label = r["figure"].replace('"', "'")
            f.write(f'{i} "{label}" {r["ratio"]:.4f} {bound or "NaN"}\n')
    script = f"""
set terminal png size 1400,{200 + 28 * len(rows)} font ",10"
set output "{os.path.join(out_dir, 'chart.png')}"
set title "codexd / reference (medians of one run; 1.0 = the reference; x = the goal)"
set termoption noenhanced
set style fill solid 0.6
set ytics nomirror
set yrange [-0.5:{len(rows) - 0.5}] reverse
set xrange [0:*]
set logscale x 2
set xrange [0.05:*]
set grid xtics
unset key
plot "{data}" using 3:1:(0.05):3:($1-0.35):($1+0.35):ytic(2) with boxxyerrorbars lc rgb "#4477aa", \\
     "{data}" using 4:1 with points pt 2 ps 2 lc rgb "#cc3311"
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=False)
    print(f"chart: {os.path.join(out_dir, 'chart.png')}")


if __name__ == "__main__":
    main()
