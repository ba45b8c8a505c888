"""Tensors to and from safetensors files: round trips of every dtype and shape on every
device, views saved as their values, files identical to the safetensors package's (and
readable by it and by PyTorch both ways), tensors loaded straight to a device, damaged
and hostile files as typed errors (each in a child interpreter), and a failed save that
leaves the previous file intact."""

from __future__ import annotations

import json
import os
import struct

import ember
import numpy as np
import pytest
from helpers import DTYPES, NP_DTYPE, edtype, raises_op, require_dtype, run_python

SHAPES = [(), (0,), (5,), (2, 3, 4), (3, 0, 2)]
CODES = {"bool": "BOOL", "uint8": "U8", "int32": "I32", "uint32": "U32", "int64": "I64",
         "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64"}  # fmt: skip


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("uint8", "uint32"):
        return rng.integers(0, 250, shape).astype(NP_DTYPE[dtype])
    if dtype in ("int32", "int64"):
        return rng.integers(-1000, 1000, shape).astype(NP_DTYPE[dtype])
    return rng.standard_normal(shape).astype(NP_DTYPE[dtype])


def header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n)), 8 + n


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype_and_shape(device, dtype, tmp_path):
    if not require_dtype(device, dtype):
        return
    tensors = {f"t{i}": ember.tensor(values(s, dtype, i), dtype=dtype, device=device)
               for i, s in enumerate(SHAPES)}  # fmt: skip
    path = tmp_path / "a.safetensors"
    ember.save_file(tensors, path)  # a GPU tensor saves without being moved first
    h, _ = header(path)
    assert {k: v["dtype"] for k, v in h.items()} == {k: CODES[dtype] for k in tensors}
    for where in ("cpu", device):
        back = ember.load_file(path, device=where)
        assert sorted(back) == sorted(tensors)
        for name, t in tensors.items():
            b = back[name]
            assert b.dtype == edtype(dtype) and b.shape == t.shape
            assert b.device.same_device(ember.device(where) if isinstance(where, str) else where)
            np.testing.assert_array_equal(b.to_device("cpu").numpy(), t.to_device("cpu").numpy())


def test_views_save_their_values(device, tmp_path):
    base = ember.arange(24.0, device=device).reshape(2, 3, 4)
    views = {
        "transposed": base.permute(2, 0, 1),
        "sliced": base[:, 1:, ::2],
        "reversed": base.flip(2),
        "broadcast": ember.arange(4.0, device=device).expand(3, 4),
        "element": base[1, 2, 3],
    }
    path = tmp_path / "v.safetensors"
    ember.save_file(views, path)
    back = ember.load_file(path)
    for name, v in views.items():
        assert back[name].shape == v.shape
        np.testing.assert_array_equal(back[name].numpy(), v.to_device("cpu").numpy())


def test_cpu_tensors_share_the_mapping_and_never_write_the_file(tmp_path):
    path = tmp_path / "m.safetensors"
    ember.save_file({"x": ember.arange(8.0), "y": ember.ones(3)}, path)
    before = path.read_bytes()
    f = ember.safe_open(path)
    x = f.get_tensor("x")
    x[0] = 100.0  # a private page: the tensor changes, the file does not
    x += 1
    assert x.tolist()[:2] == [101.0, 2.0]
    assert path.read_bytes() == before
    assert ember.load_file(path)["x"].tolist()[0] == 0.0
    del f
    assert x.sum().item() == 100 + sum(range(1, 8)) + 8  # the mapping outlives the file object


def test_safe_open_reads_one_tensor_and_the_metadata(device, tmp_path):
    path = tmp_path / "o.safetensors"
    ember.save_file({"b": ember.ones(2), "a": ember.zeros(3, dtype=ember.int64)}, path,
                    metadata={"format": "pt", "note": 'quotes " and \\ and\nnewlines é'})  # fmt: skip
    with ember.safe_open(path, device=device) as f:
        assert f.keys() == ["a", "b"]
        assert f.metadata() == {"format": "pt", "note": 'quotes " and \\ and\nnewlines é'}
        a = f.get_tensor("a")
        assert a.dtype == ember.int64 and a.device.same_device(device) and a.tolist() == [0, 0, 0]
        with raises_op(ember.InvalidArgumentError, "get_tensor", "'c'", "'a', 'b'"):
            f.get_tensor("c")
    ember.save_file({"x": ember.ones(1)}, path)
    assert ember.safe_open(path).metadata() is None
    with raises_op(ember.InvalidArgumentError, "safe_open", "framework"):
        ember.safe_open(path, framework="pt")


def test_a_dtype_the_device_lacks_is_refused_not_cast(tmp_path):
    if not ember.metal_is_available():
        pytest.skip("needs a Metal device (the emulator on Linux)")
    path = tmp_path / "d.safetensors"
    ember.save_file({"x": ember.ones(2, dtype=ember.float64), "y": ember.ones(2)}, path)
    with raises_op(ember.UnsupportedDTypeError, "load_file", "float64", "'x'"):
        ember.load_file(path, device="metal")
    with ember.safe_open(path, device="metal") as f:
        assert f.get_tensor("y").device.kind == "metal"


# ---- the safetensors package and PyTorch, both ways

NUMPY_DTYPES = [d for d in DTYPES if d != "bfloat16"]


def test_files_are_the_safetensors_packages_bytes(tmp_path):
    sn = pytest.importorskip("safetensors.numpy")
    arrays = {f"x{d}": values((3, 2), d, i) for i, d in enumerate(NUMPY_DTYPES)}
    arrays["scalar"] = np.array(1.5, np.float32)
    arrays["empty"] = np.zeros((0, 4), np.int64)
    arrays['odd "name"\n'] = np.ones(3, np.uint8)
    sn.save_file(arrays, tmp_path / "theirs.safetensors", metadata={"k": "v"})
    ember.save_file({k: ember.tensor(v) for k, v in arrays.items()}, tmp_path / "ours.safetensors",
                    metadata={"k": "v"})  # fmt: skip
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()
    theirs = sn.load_file(tmp_path / "ours.safetensors")
    ours = ember.load_file(tmp_path / "theirs.safetensors")
    for k, v in arrays.items():
        assert theirs[k].dtype == v.dtype and ours[k].dtype == edtype(str(v.dtype))
        np.testing.assert_array_equal(theirs[k], v)
        np.testing.assert_array_equal(ours[k].numpy(), v)


def test_bfloat16_bits_are_the_formats(tmp_path):
    # without PyTorch: the bytes of a BF16 tensor are the values' upper 16 bits, little-endian
    x = np.array([1.0, -2.0, 0.5, 3.140625, -0.0, np.inf], np.float32)
    path = tmp_path / "b.safetensors"
    ember.save_file({"x": ember.tensor(x, dtype=ember.bfloat16)}, path)
    h, start = header(path)
    assert h["x"] == {"dtype": "BF16", "shape": [6], "data_offsets": [0, 12]}
    data = path.read_bytes()[start:]
    assert data == (x.view(np.uint32) >> 16).astype("<u2").tobytes()
    np.testing.assert_array_equal(ember.load_file(path)["x"].to_dtype(ember.float32).numpy(), x)


def test_pytorch_both_ways(tmp_path):
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    dtypes = {"bool": torch.bool, "uint8": torch.uint8, "int32": torch.int32,
              "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16,
              "float32": torch.float32, "float64": torch.float64}  # fmt: skip
    theirs = {d: torch.tensor(values((4, 3), d if d != "bfloat16" else "float32", 7)).to(t)
              for d, t in dtypes.items()}  # fmt: skip
    theirs["t_view"] = torch.arange(12.0).reshape(3, 4).t().contiguous()
    st.save_file(theirs, tmp_path / "pt.safetensors", metadata={"format": "pt"})
    ours = ember.load_file(tmp_path / "pt.safetensors")
    for k, v in theirs.items():
        got = torch.from_dlpack(ours[k]) if v.dtype != torch.bool else torch.tensor(ours[k].numpy())
        assert got.dtype == v.dtype and torch.equal(got, v), k
    ember.save_file(ours, tmp_path / "ours.safetensors", metadata={"format": "pt"})
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "pt.safetensors").read_bytes()
    back = st.load_file(tmp_path / "ours.safetensors")
    for k, v in theirs.items():
        assert torch.equal(back[k], v), k


# ---- damaged and hostile files: each a typed error, in a child interpreter


def file_bytes(hdr, data=b"", *, raw_header=None, length=None):
    body = raw_header if raw_header is not None else json.dumps(hdr).encode()
    n = len(body) if length is None else length
    return struct.pack("<Q", n) + body + data


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
DAMAGED = {
    "empty file": (b"", "fewer than the 8"),
    "five bytes": (b"\x01\x02\x03\x04\x05", "fewer than the 8"),
    "header length 2**62": (file_bytes(GOOD, b"\0" * 8, length=2**62), "claims"),
    "header length beyond the file": (file_bytes(GOOD, b"\0" * 8, length=500), "claims"),
    "header length 2**64 - 1": (struct.pack("<Q", 2**64 - 1) + b"{}", "claims"),
    "truncated header": (file_bytes(None, raw_header=b'{"a": {"dtype": "F3'), "string is not closed"),
    "truncated data": (file_bytes(GOOD, b"\0" * 5), "ends at byte 8"),
    "extra data": (file_bytes(GOOD, b"\0" * 12), "cover 8"),
    "invalid json": (file_bytes(None, raw_header=b"{'a': 1}", ), "expected a string key"),
    "not an object": (file_bytes([1, 2]), "not a JSON object"),
    "trailing bytes": (file_bytes(None, raw_header=b'{"a": 1} x'), "unexpected bytes"),
    "unknown dtype": (file_bytes({"a": {"dtype": "F48", "shape": [2], "data_offsets": [0, 8]}},
                                 b"\0" * 8), "unknown dtype 'F48'"),
    "offsets out of range": (file_bytes({"a": {"dtype": "F32", "shape": [2],
                                               "data_offsets": [0, 2**40]}}, b"\0" * 8), "ends at"),
    "offsets reversed": (file_bytes({"a": {"dtype": "F32", "shape": [0],
                                           "data_offsets": [8, 0]}}, b"\0" * 8), "begins after"),
    "overlapping": (file_bytes({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
                               b"\0" * 12), "overlaps"),
    "a gap": (file_bytes({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
                         b"\0" * 8), "gap"),
    "size does not match shape": (file_bytes({"a": {"dtype": "F64", "shape": [2],
                                                    "data_offsets": [0, 8]}}, b"\0" * 8), "need 16"),
    "negative dim": (file_bytes({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}},
                                b"\0" * 8), "non-negative integer"),
    "float dim": (file_bytes({"a": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}},
                             b"\0" * 8), "non-negative integer"),
    "huge shape": (file_bytes({"a": {"dtype": "F32", "shape": [2**40, 2**40],
                                     "data_offsets": [0, 8]}}, b"\0" * 8), "too many elements"),
    "huge dim": (file_bytes({"a": {"dtype": "F32", "shape": [10**30], "data_offsets": [0, 8]}},
                            b"\0" * 8), "too large"),
    "missing field": (file_bytes({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8),
                      "needs dtype, shape and data_offsets"),
    "duplicate name": (file_bytes(None, b"\0" * 8, raw_header=(
        b'{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, '
        b'"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')), "appears twice"),
    "metadata not strings": (file_bytes({"__metadata__": {"k": 1}, **GOOD}, b"\0" * 8),
                             "must be a string"),
    "deep nesting": (file_bytes(None, raw_header=b"[" * 100000 + b"]" * 100000),
                     "nested too deeply"),
    "bad escape": (file_bytes(None, raw_header=b'{"a\\q": 1}'), "bad escape"),
    "lone surrogate": (file_bytes(None, raw_header=b'{"\\ud800": 1}'), "surrogate"),
    "bool bytes other than 0 and 1": (file_bytes({"a": {"dtype": "BOOL", "shape": [2],
                                                        "data_offsets": [0, 2]}}, b"\x01\x07"),
                                      "holds the byte 7"),
}


def test_damaged_files_are_typed_errors_in_a_child(tmp_path):
    paths = {}
    for i, (name, (data, _)) in enumerate(DAMAGED.items()):
        paths[name] = str(tmp_path / f"d{i}.safetensors")
        with open(paths[name], "wb") as f:
            f.write(data)
    code = f"""
        import json, ember
        out = {{}}
        for name, path in {paths!r}.items():
            try:
                ember.load_file(path)
                out[name] = ["no error", "", None]
            except BaseException as e:
                out[name] = [type(e).__name__, str(e), getattr(e, "path", None)]
        print(json.dumps(out))
    """
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-3000:]  # no crash, no hang
    got = json.loads(proc.stdout)
    wrong = []
    for name, (_, fact) in DAMAGED.items():
        cls, msg, path = got[name]
        if cls != "FileFormatError" or fact not in msg or path != paths[name] or paths[name] not in msg:
            wrong.append(f"{name}: {cls}: {msg}")
    assert not wrong, "\n".join(wrong)


def test_damaged_file_errors_carry_the_offset_and_tensor(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(DAMAGED["unknown dtype"][0])
    with pytest.raises(ember.FileFormatError) as info:
        ember.load_file(path)
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, ember.EmberError)
    assert e.name == "a" and e.path == str(path) and e.offset > 8


def test_a_dtype_ember_lacks_is_unsupported_but_the_rest_loads(tmp_path):
    path = tmp_path / "i8.safetensors"
    path.write_bytes(file_bytes({"a": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]},
                                 "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]}},
                                b"\1\2\3\4"))  # fmt: skip
    with ember.safe_open(path) as f:
        assert f.keys() == ["a", "b"] and f.get_tensor("b").tolist() == [3, 4]
        with raises_op(ember.UnsupportedDTypeError, "load_file", "I8"):
            f.get_tensor("a")


def test_missing_files_and_directories_are_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        ember.load_file(tmp_path / "nope.safetensors")
    assert info.value.filename == str(tmp_path / "nope.safetensors")
    with pytest.raises(IsADirectoryError):
        ember.load_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        ember.save_file({"x": ember.ones(1)}, tmp_path / "no" / "such" / "dir.safetensors")
    with pytest.raises(IsADirectoryError):
        ember.save_file({"x": ember.ones(1)}, tmp_path)
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def test_save_file_refuses_bad_arguments(tmp_path):
    p = tmp_path / "x.safetensors"
    cases = [
        (lambda: ember.save_file([ember.ones(1)], p), ember.InvalidTypeError),
        (lambda: ember.save_file({1: ember.ones(1)}, p), ember.InvalidTypeError),
        (lambda: ember.save_file({"a": np.ones(1)}, p), ember.InvalidTypeError),
        (lambda: ember.save_file({"a": ember.ones(1)}, p, metadata={"k": 1}), ember.InvalidTypeError),
        (lambda: ember.save_file({"a": ember.ones(1)}, p, metadata=["k"]), ember.InvalidTypeError),
        (lambda: ember.save_file({"__metadata__": ember.ones(1)}, p), ember.InvalidArgumentError),
        (lambda: ember.save_file({"a": ember.ones(1)}, 3.5), ember.InvalidTypeError),
        (lambda: ember.load_file(None), ember.InvalidTypeError),
    ]
    for call, cls in cases:
        with pytest.raises(cls):
            call()
    assert not p.exists()


def test_a_failed_save_keeps_the_previous_file(tmp_path):
    # The child may write files of at most 1 MiB: saving 4 MiB fails with EFBIG halfway.
    path = tmp_path / "w.safetensors"
    ember.save_file({"old": ember.arange(10.0)}, path)
    before = path.read_bytes()
    code = f"""
        import resource, signal, ember
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
        try:
            ember.save_file({{"new": ember.ones(1 << 20)}}, {str(path)!r})
            print("saved")
        except OSError as e:
            print(type(e).__name__, e.errno, e.filename)
    """
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[0] == "OSError" and proc.stdout.split()[2] == str(path), proc.stdout
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["w.safetensors"]  # the temporary file is gone


# ---- save / load by extension: .safetensors, .npy, .npz


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_npy_and_npz_round_trip(device, dtype, tmp_path):
    if not require_dtype(device, dtype):
        return
    tensors = {f"t{i}": ember.tensor(values(s, dtype, i), dtype=dtype, device=device)
               for i, s in enumerate(SHAPES)}  # fmt: skip
    for name, t in tensors.items():
        ember.save(tmp_path / f"{name}.npy", t.T if t.ndim == 2 else t)
        back = ember.load(tmp_path / f"{name}.npy", device=device)
        assert back.dtype == t.dtype and back.device.same_device(device)
        np.testing.assert_array_equal(back.numpy(), (t.T if t.ndim == 2 else t).numpy())
        np.testing.assert_array_equal(np.load(tmp_path / f"{name}.npy"), back.numpy())
    ember.save(tmp_path / "all.npz", tensors)
    back = ember.load(tmp_path / "all.npz", device=device)
    assert sorted(back) == sorted(tensors)
    with np.load(tmp_path / "all.npz") as theirs:
        for name, t in tensors.items():
            np.testing.assert_array_equal(back[name].numpy(), t.numpy())
            np.testing.assert_array_equal(theirs[name], t.numpy())


def test_numpy_files_in_any_order_and_byte_order(tmp_path):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    forms = {
        "fortran": np.asfortranarray(a),
        "big_endian": a.astype(">f8"),
        "big_endian_fortran": np.asfortranarray(a.astype(">i4")),
        "little_u32": a.astype("<u4"),
    }
    for name, arr in forms.items():
        np.save(tmp_path / f"{name}.npy", arr)
        got = ember.load(tmp_path / f"{name}.npy")
        assert got.dtype == edtype(arr.dtype.newbyteorder("=").name), name
        np.testing.assert_array_equal(got.numpy(), a.astype(arr.dtype.newbyteorder("=")))
    np.savez(tmp_path / "mixed.npz", **forms)
    got = ember.load(tmp_path / "mixed.npz")
    for name, arr in forms.items():
        np.testing.assert_array_equal(got[name].numpy(), arr)


def test_save_and_load_safetensors_by_extension(device, tmp_path):
    d = {"w": ember.ones(2, 3, device=device), "b": ember.zeros(3, dtype=ember.bfloat16, device=device)}
    ember.save(tmp_path / "m.safetensors", d)
    back = ember.load(tmp_path / "m.safetensors", device=device)
    assert sorted(back) == ["b", "w"] and back["b"].dtype == ember.bfloat16
    assert back["w"].device.same_device(device)


class _Payload:  # unpickling it would leave a file behind
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_numpy_files_never_execute_pickles(tmp_path):
    marker = tmp_path / "executed"
    arr = np.array([_Payload(str(marker))], dtype=object)
    np.save(tmp_path / "evil.npy", arr, allow_pickle=True)
    np.savez(tmp_path / "evil.npz", x=arr)
    for name in ("evil.npy", "evil.npz"):
        with pytest.raises(ember.FileFormatError, match="pickle"):
            ember.load(tmp_path / name)
    assert not marker.exists()


def test_numpy_files_ember_cannot_hold_or_read(tmp_path):
    np.save(tmp_path / "i8.npy", np.arange(3, dtype=np.int8))
    with raises_op(ember.UnsupportedDTypeError, "load", "int8"):
        ember.load(tmp_path / "i8.npy")
    with raises_op(ember.UnsupportedDTypeError, "save", "bfloat16", ".safetensors"):
        ember.save(tmp_path / "b.npy", ember.ones(2, dtype=ember.bfloat16))
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    (tmp_path / "short.npy").write_bytes(np.lib.format.magic(1, 0))
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 not a zip")
    for name in ("bad.npy", "short.npy", "bad.npz"):
        with pytest.raises(ember.FileFormatError) as info:
            ember.load(tmp_path / name)
        assert info.value.path == str(tmp_path / name)
    np.save(tmp_path / "one.npy", np.ones(2))
    (tmp_path / "one.npz").write_bytes((tmp_path / "one.npy").read_bytes())
    with pytest.raises(ember.FileFormatError, match="not a .npz"):
        ember.load(tmp_path / "one.npz")
    with pytest.raises(FileNotFoundError):
        ember.load(tmp_path / "missing.npy")


def test_save_and_load_refuse_bad_arguments(tmp_path):
    t = ember.ones(2)
    with raises_op(ember.InvalidTypeError, "save", "path first"):
        ember.save(t, tmp_path / "x.npy")
    with raises_op(ember.InvalidArgumentError, "save", ".safetensors"):
        ember.save(tmp_path / "x.pt", t)
    with raises_op(ember.InvalidArgumentError, "load", ".npy"):
        ember.load(tmp_path / "x.bin")
    with raises_op(ember.InvalidTypeError, "save", "dict"):
        ember.save(tmp_path / "x.safetensors", t)
    with raises_op(ember.InvalidTypeError, "save", "dict"):
        ember.save(tmp_path / "x.npz", t)
    with raises_op(ember.InvalidTypeError, "save", "Tensor"):
        ember.save(tmp_path / "x.npy", {"a": t})
    with raises_op(ember.InvalidTypeError, "save", "Tensor"):
        ember.save(tmp_path / "x.npz", {"a": np.ones(2)})
    assert os.listdir(tmp_path) == []


# ---- pickle


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_keeps_dtype_bits_and_device(device, dtype):
    import pickle

    if not require_dtype(device, dtype):
        return
    for shape in SHAPES:
        t = ember.tensor(values(shape, dtype if dtype != "bfloat16" else "float32", 3),
                         dtype=dtype, device=device)  # fmt: skip
        back = pickle.loads(pickle.dumps(t.T if t.ndim == 2 else t))
        assert back.dtype == t.dtype and back.device.same_device(device)
        want = (t.T if t.ndim == 2 else t).to_device("cpu")
        if dtype == "bfloat16":  # compare the bits through float32, which holds them exactly
            want, back = want.to_dtype(ember.float32), back.to_dtype(ember.float32)
        np.testing.assert_array_equal(back.to_device("cpu").numpy(), want.numpy())


def test_pickles_of_the_earlier_form_still_load():
    from ember._tensor import _rebuild

    t = _rebuild(np.arange(3.0, dtype=np.float32), "float32", "cpu")
    assert t.tolist() == [0.0, 1.0, 2.0] and t.dtype == ember.float32


def test_a_damaged_pickle_payload_is_refused():
    from ember._tensor import _rebuild_bytes

    with raises_op(ember.InvalidArgumentError, "pickle", "bytes"):
        _rebuild_bytes(b"\0" * 7, "float32", (2,), "cpu")
