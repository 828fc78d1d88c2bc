#!/usr/bin/env python3
"""Hashes of the kernels in a PTX file, to tell whether two builds compiled a kernel identically.

ptxas turns identical PTX into identical machine code, so two trees whose kernel PTX hashes agree
run the same code on the GPU: a measurement of one holds for the other. Comments are dropped.

Get the PTX of a translation unit from the CUDA build's own compile command: touch the file, run
`NVCC_WRAPPER_SHOW_COMMANDS_BEING_RUN=1 make build BACKEND=cuda`, which prints the nvcc line Kokkos'
nvcc_wrapper runs (before `&&`), and run that line in build/cuda with `-c -o FILE.o` replaced by
`-ptx -o FILE.ptx` and Debian's nvcc first in PATH (`PATH=/usr/bin:$PATH`, as the bootstrap
builds). Then:

    scripts/ptx_hashes.py apply_double.ptx --match 'ColumnStencil<double, Kokkos::LayoutRight'
"""
import argparse
import hashlib
import re
import subprocess


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ptx")
    parser.add_argument("--match", default="", help="regular expression on the demangled name")
    args = parser.parse_args()
    text = open(args.ptx).read()
    for entry in re.split(r"\n(?=(?:\.visible |\.weak )?\.entry )", text):
        head = re.match(r"(?:\.visible |\.weak )?\.entry (\S+)\(", entry)
        if not head:
            continue
        name = subprocess.run(["c++filt", head.group(1)], capture_output=True,
                              text=True).stdout.strip()
        if not re.search(args.match, name):
            continue
        body = re.sub(r"//.*", "", entry.split("{", 1)[1])
        print(hashlib.sha1(body.encode()).hexdigest()[:12], name)


if __name__ == "__main__":
    main()
