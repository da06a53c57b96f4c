"""tf.io.gfile / tf.gfile on local files: modes, positions, directory functions, errors."""

import os

import pytest

from tensorweave import errors
from tensorweave.data import gfile


def test_text_write_append_read_lines(tmp_path):
    p = str(tmp_path / "t.txt")
    with gfile.GFile(p, "w") as f:
        f.write("one\r\ntwo\n")
        f.write(b"three")
    with gfile.GFile(p, "a") as f:
        f.write("\nfour\n")
    with gfile.GFile(p) as f:
        assert f.readline() == "one\r\n"  # no newline translation, as TF
        assert list(f) == ["two\n", "three\n", "four\n"]
        assert f.readline() == ""
    assert gfile.Open(p).readlines() == ["one\r\n", "two\n", "three\n", "four\n"]


def test_binary_seek_tell_size_and_read(tmp_path):
    p = tmp_path / "b.bin"
    with gfile.GFile(str(p), "wb") as f:
        f.write(bytes(range(10)))
        assert f.size() == 10  # includes unflushed bytes
        f.write("é")
        f.flush()
    with gfile.GFile(p, "rb") as f:
        assert f.size() == 12
        assert f.read(3) == b"\x00\x01\x02" and f.tell() == 3
        f.seek(8)
        assert f.read() == b"\x08\x09" + "é".encode()
        f.seek(offset=-2, whence=2)
        assert f.read(1) == b"\xc3"
        f.seek(position=1)
        assert f.tell() == 1
    assert f.closed


def test_mode_and_closed_errors(tmp_path):
    p = str(tmp_path / "m.txt")
    with gfile.GFile(p, "w") as f:
        with pytest.raises(errors.PermissionDeniedError, match="isn't open for reading"):
            f.read()
    with gfile.GFile(p) as f:
        with pytest.raises(errors.PermissionDeniedError, match="isn't open for writing"):
            f.write("x")
    with pytest.raises(errors.FailedPreconditionError, match="closed"):
        f.read()
    with pytest.raises(errors.NotFoundError, match="No such file or directory"):
        gfile.GFile(str(tmp_path / "missing.txt"))
    with pytest.raises(errors.InvalidArgumentError):
        gfile.GFile(p, "x")


def test_directory_functions(tmp_path):
    root = str(tmp_path / "a")
    gfile.makedirs(os.path.join(root, "b", "c"))
    gfile.MakeDirs(os.path.join(root, "b", "c"))  # existing: fine
    assert gfile.isdir(root) and gfile.IsDirectory(os.path.join(root, "b"))
    for name in ("x1.txt", "x2.txt", "y.bin"):
        with gfile.GFile(os.path.join(root, name), "w") as f:
            f.write(name)
    assert gfile.listdir(root) == ["b", "x1.txt", "x2.txt", "y.bin"]
    assert gfile.ListDirectory(root) == gfile.listdir(root)
    assert gfile.glob(os.path.join(root, "x*.txt")) == [os.path.join(root, "x1.txt"),
                                                        os.path.join(root, "x2.txt")]
    assert gfile.Glob([os.path.join(root, "*.bin"), os.path.join(root, "x1*")]) == [
        os.path.join(root, "x1.txt"), os.path.join(root, "y.bin")]
    walked = list(gfile.walk(root))
    assert walked[0] == (root, ["b"], ["x1.txt", "x2.txt", "y.bin"])
    assert [w[0] for w in walked] == [root, os.path.join(root, "b"),
                                      os.path.join(root, "b", "c")]
    assert list(gfile.Walk(str(tmp_path / "nope"))) == []
    st = gfile.stat(os.path.join(root, "y.bin"))
    assert st.length == 5 and not st.is_directory and st.mtime_nsec > 0
    assert gfile.Stat(root).is_directory
    with pytest.raises(errors.NotFoundError):
        gfile.listdir(str(tmp_path / "nope"))
    with pytest.raises(errors.AlreadyExistsError):
        gfile.mkdir(root)
    with pytest.raises(errors.NotFoundError):
        gfile.MkDir(str(tmp_path / "p" / "q"))
    with pytest.raises(errors.FailedPreconditionError):
        gfile.makedirs(os.path.join(root, "y.bin", "z"))


def test_copy_rename_remove_rmtree(tmp_path):
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    with gfile.GFile(a, "w") as f:
        f.write("A")
    gfile.copy(a, b)
    assert gfile.GFile(b).read() == "A"
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Copy(a, b)
    with gfile.GFile(a, "w") as f:
        f.write("A2")
    gfile.copy(a, b, overwrite=True)
    assert gfile.GFile(b).read() == "A2"
    c = str(tmp_path / "c.txt")
    gfile.rename(b, c)
    assert not gfile.exists(b) and gfile.Exists(c)
    with pytest.raises(errors.AlreadyExistsError):
        gfile.Rename(a, c)
    gfile.Rename(a, c, overwrite=True)
    assert gfile.GFile(c).read() == "A2" and not gfile.exists(a)
    with pytest.raises(errors.NotFoundError):
        gfile.rename(a, str(tmp_path / "d.txt"))
    gfile.remove(c)
    with pytest.raises(errors.NotFoundError, match="No such file or directory"):
        gfile.Remove(c)
    d = str(tmp_path / "tree")
    gfile.makedirs(os.path.join(d, "x", "y"))
    gfile.DeleteRecursively(d)
    assert not gfile.exists(d)
    with pytest.raises(errors.NotFoundError):
        gfile.rmtree(d)
    assert gfile.join("a", "b", "c") == os.path.join("a", "b", "c")
