"""retrograd.hub against torch.hub: the cache directory, downloads (file:// URLs here) with
hash checks, load_state_dict_from_url of a torch checkpoint, and entry points of a local
hubconf.py."""

from __future__ import annotations

import hashlib
import textwrap

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


@pytest.fixture
def hub_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(retrograd.hub, "_hub_dir", None)
    yield tmp_path


def test_cache_directory_is_torchs(hub_dirs, monkeypatch):
    assert retrograd.hub.get_dir() == torch.hub.get_dir() == str(hub_dirs / "home" / "hub")
    retrograd.hub.set_dir(hub_dirs / "elsewhere")
    assert retrograd.hub.get_dir() == str(hub_dirs / "elsewhere")


def test_download_with_hash_check(hub_dirs):
    src = hub_dirs / "blob.bin"
    src.write_bytes(b"retrograd" * 100)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = hub_dirs / "copy.bin"
    retrograd.hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8])
    assert dst.read_bytes() == src.read_bytes()
    for lib, name in ((retrograd, "ours.bin"), (torch, "theirs.bin")):
        with pytest.raises(RuntimeError) as err:
            lib.hub.download_url_to_file(src.as_uri(), str(hub_dirs / name), hash_prefix="0000",
                                         progress=False)
        assert str(err.value) == f'invalid hash value (expected "0000", got "{digest}")'
        assert not (hub_dirs / name).exists()
    assert not list(hub_dirs.glob("*.partial"))


def test_load_state_dict_from_url_reads_a_torch_checkpoint(hub_dirs, capsys):
    model = torch.nn.Linear(3, 2)
    ckpt = hub_dirs / "linear.pth"
    torch.save(model.state_dict(), ckpt)
    digest = hashlib.sha256(ckpt.read_bytes()).hexdigest()
    named = hub_dirs / f"linear-{digest[:10]}.pth"
    named.write_bytes(ckpt.read_bytes())
    state = retrograd.hub.load_state_dict_from_url(named.as_uri(), check_hash=True)
    assert f'Downloading: "{named.as_uri()}"' in capsys.readouterr().out
    cached = hub_dirs / "home" / "hub" / "checkpoints" / named.name
    assert cached.exists()
    ours = retrograd.nn.Linear(3, 2)
    ours.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(retrograd.tensor(x)).detach().numpy(),
                               model(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    named.unlink()  # a second call reads the cache
    again = retrograd.hub.load_state_dict_from_url(named.as_uri(), file_name=None)
    assert capsys.readouterr().out == ""
    assert list(again) == ["weight", "bias"]


HUBCONF = textwrap.dedent('''
    """A small hub repository."""
    dependencies = ["numpy"]


    def tiny(width=4):
        """A tiny model."""
        import retrograd
        return retrograd.nn.Linear(2, width)


    def _private():
        return None
''')


def test_local_entry_points(hub_dirs):
    repo = hub_dirs / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    model = retrograd.hub.load(str(repo), "tiny", width=3, source="local")
    assert isinstance(model, retrograd.nn.Linear) and model.out_features == 3
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        retrograd.hub.load(str(repo), "missing", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        retrograd.hub.load(str(repo), "tiny", source="svn")
    (repo / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "not_a_pkg_x"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: not_a_pkg_x"):
        retrograd.hub.load(str(repo), "tiny", source="local")


def test_github_sources_say_what_to_do(hub_dirs):
    for call in (lambda: retrograd.hub.load("owner/repo", "model"),
                 lambda: retrograd.hub.list("owner/repo"),
                 lambda: retrograd.hub.help("owner/repo", "model")):
        with pytest.raises(NotImplementedError, match="local directory only"):
            call()


def test_model_zoo_load_url_is_the_hub_function():
    import torch.utils.model_zoo as theirs

    import retrograd.utils.model_zoo as ours

    assert ours.load_url is retrograd.hub.load_state_dict_from_url
    assert theirs.load_url is torch.hub.load_state_dict_from_url
