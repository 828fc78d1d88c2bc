"""Opens a kstencil XDMF series in ParaView and compares what ParaView reads with the HDF5 files.

Usage: xvfb-run -a pvbatch tests/paraview_check.py <series.xdmf>

For every time step the reader reports, the data are fetched (servermanager.Fetch) and every point
array is compared value by value with its HDF5 dataset (read with h5py; ParaView's arrays are
flattened x fastest, which is C order of the (nz, ny, nx) datasets). The bounds of each grid must
be origin + (dims - 1) * spacing per axis (from the dataset's attributes), and the reader's time
values must be the step files' "time" attributes. Prints one line per array and exits 1 on any
mismatch.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

# h5py normally imports in pvbatch (Debian's pvbatch runs the system Python); otherwise the files are
# read by the system Python in a subprocess.
try:
    import h5py
except ImportError:
    h5py = None

SYSTEM_PYTHON = "/usr/bin/python3"

_READ_SCRIPT = r"""
import json, sys
import h5py, numpy as np
out, paths = sys.argv[1], sys.argv[2:]
meta, arrays = {}, {}
for n, path in enumerate(paths):
    with h5py.File(path, "r") as f:
        entry = {"time": float(f.attrs["time"]), "datasets": {}}
        for m, name in enumerate(f):
            d = f[name]
            key = "a%d_%d" % (n, m)
            arrays[key] = d[...]
            entry["datasets"][name] = {"key": key,
                                       "origin": [float(x) for x in d.attrs["origin"]],
                                       "spacing": [float(x) for x in d.attrs["spacing"]],
                                       "dims": [int(x) for x in d.attrs["dims"]]}
        meta[path] = entry
np.savez(out + ".npz", **arrays)
with open(out + ".json", "w") as f:
    json.dump(meta, f)
"""


def read_step_files(paths):
    """{path: {"time": t, "datasets": {name: {"values", "origin", "spacing", "dims"}}}}"""
    result = {}
    if h5py is not None and not os.environ.get("KSTENCIL_PARAVIEW_CHECK_NO_H5PY"):
        for path in paths:
            with h5py.File(path, "r") as f:
                entry = {"time": float(f.attrs["time"]), "datasets": {}}
                for name in f:
                    d = f[name]
                    entry["datasets"][name] = {"values": d[...],
                                               "origin": [float(x) for x in d.attrs["origin"]],
                                               "spacing": [float(x) for x in d.attrs["spacing"]],
                                               "dims": [int(x) for x in d.attrs["dims"]]}
                result[path] = entry
        return result
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "steps")
        # pvbatch's own Python settings must not leak into the system Python.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        subprocess.run([SYSTEM_PYTHON, "-c", _READ_SCRIPT, out] + list(paths), check=True, env=env)
        with open(out + ".json") as f:
            meta = json.load(f)
        arrays = np.load(out + ".npz")
        for path, entry in meta.items():
            for d in entry["datasets"].values():
                d["values"] = arrays[d.pop("key")]
            result[path] = entry
    return result


def xdmf_steps(xdmf):
    """[(time, {attribute name: (HDF5 file, dataset)})] from the XDMF temporal collection."""
    root = ET.parse(xdmf).getroot()
    series = root.find("Domain/Grid")
    if series is None or series.get("CollectionType") != "Temporal":
        raise RuntimeError("%s: no temporal collection under Xdmf/Domain" % xdmf)
    folder = os.path.dirname(xdmf)
    steps = []
    for step in series.findall("Grid"):
        time = step.find("Time")
        if time is None:
            time = step.find("Grid/Time")
        refs = {}
        for attribute in step.iter("Attribute"):
            item = attribute.find("DataItem")
            if item is None or item.get("Format") != "HDF":
                continue
            file_name, dataset = item.text.strip().split(":", 1)
            refs[attribute.get("Name")] = (os.path.join(folder, file_name), dataset.lstrip("/"))
        steps.append((float(time.get("Value")), refs))
    return steps


def leaves(data):
    """The datasets of a (possibly composite) data object."""
    if not data.IsA("vtkCompositeDataSet"):
        return [data]
    found = []
    it = data.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        found.append(it.GetCurrentDataObject())
        it.GoToNextItem()
    return found


def close(a, b, scale):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12 * scale)


def main():
    if len(sys.argv) != 2:
        print("usage: pvbatch paraview_check.py <series.xdmf>")
        return 2
    # Xdmf reader pitfall: give it an absolute path.
    xdmf = os.path.abspath(sys.argv[1])

    from paraview import servermanager
    from paraview.simple import XDMFReader
    from vtkmodules.util.numpy_support import vtk_to_numpy

    steps = xdmf_steps(xdmf)
    files = sorted({path for _, refs in steps for path, _ in refs.values()})
    step_data = read_step_files(files)
    failures = 0

    def report(ok, text):
        nonlocal failures
        if not ok:
            failures += 1
        print("%s %s" % ("ok  " if ok else "FAIL", text))

    reader = XDMFReader(FileNames=[xdmf])
    reader.UpdatePipelineInformation()
    times = reader.TimestepValues
    times = [float(t) for t in times] if hasattr(times, "__len__") else [float(times)]

    # Every step file's "time" attribute is its XDMF time, and ParaView reports these times.
    file_times = []
    for t_xdmf, refs in steps:
        step_files = sorted({path for path, _ in refs.values()})
        for path in step_files:
            report(step_data[path]["time"] == t_xdmf,
                   "%s: time attribute %r, XDMF Time %r" % (os.path.basename(path),
                                                           step_data[path]["time"], t_xdmf))
        if step_files:
            file_times.append(step_data[step_files[0]]["time"])
    report(times == sorted(file_times),
           "time values: ParaView %s, step files %s" % (times, sorted(file_times)))

    for t in times:
        matching = [refs for t_xdmf, refs in steps if t_xdmf == t]
        if len(matching) != 1:
            report(False, "t=%r: %d XDMF steps have this time" % (t, len(matching)))
            continue
        datasets = {}
        for name, (path, dataset) in matching[0].items():
            if dataset not in step_data[path]["datasets"]:
                report(False, "t=%r %s: no dataset %s in %s" % (t, name, dataset, path))
                continue
            datasets[name] = (os.path.basename(path) + ":/" + dataset,
                              step_data[path]["datasets"][dataset])

        reader.UpdatePipeline(time=t)
        data = servermanager.Fetch(reader)
        seen = set()
        for block in leaves(data):
            if block is None:
                continue
            bounds = block.GetBounds()
            point_data = block.GetPointData()
            for i in range(point_data.GetNumberOfArrays()):
                name = point_data.GetArrayName(i)
                if name.startswith("vtk"):  # vtkGhostType and the like
                    continue
                if name not in datasets:
                    report(False, "t=%r %s: not an attribute of this XDMF step" % (t, name))
                    continue
                seen.add(name)
                where, d = datasets[name]
                got = vtk_to_numpy(point_data.GetArray(i))
                want = d["values"]
                if got.dtype != want.dtype or got.size != want.size:
                    report(False, "t=%r %s: ParaView %s[%d], HDF5 %s %s" %
                           (t, name, got.dtype, got.size, want.dtype, want.shape))
                    continue
                nz, ny, nx = want.shape
                if tuple(d["dims"]) != (nx, ny, nz):
                    report(False, "t=%r %s: dims attribute %s, dataset shape %s" %
                           (t, name, d["dims"], want.shape))
                    continue
                equal = np.array_equal(got.ravel(), want.ravel(), equal_nan=True)
                diff = "" if equal else ", %d values differ" % int(
                    np.count_nonzero(got.ravel() != want.ravel()))
                expected_bounds = []
                for axis in range(3):
                    lo = d["origin"][axis]
                    expected_bounds += [lo, lo + (d["dims"][axis] - 1) * d["spacing"][axis]]
                scale = max([1.0] + [abs(b) for b in expected_bounds])
                bounds_ok = all(close(a, b, scale) for a, b in zip(bounds, expected_bounds))
                if block.IsA("vtkImageData"):
                    bounds_ok = bounds_ok and list(block.GetDimensions()) == d["dims"]
                report(equal and bounds_ok,
                       "t=%r %s: %d %s values %s %s%s; bounds %s%s" %
                       (t, name, got.size, got.dtype, "equal" if equal else "DIFFER from", where,
                        diff, [round(b, 12) for b in bounds],
                        "" if bounds_ok else " != expected %s (dims %s)" %
                        ([round(b, 12) for b in expected_bounds], d["dims"])))
        for name in sorted(set(datasets) - seen):
            report(False, "t=%r %s: %s is not among ParaView's point arrays" %
                   (t, name, datasets[name][0]))

    if not times:
        report(False, "the reader reports no time steps")
    print("paraview_check: %s (%d arrays over %d time steps)" %
          ("PASS" if failures == 0 else "FAIL, %d mismatches" % failures,
           sum(len(refs) for _, refs in steps), len(times)))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    try:
        status = main()
    except Exception as e:  # a clear one-line failure instead of a pvbatch traceback
        import traceback
        traceback.print_exc()
        print("paraview_check: FAIL (%s: %s)" % (type(e).__name__, e))
        status = 1
    sys.exit(status)
