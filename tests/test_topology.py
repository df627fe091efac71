"""Topology presets load, say where their numbers come from, and user TOML files work."""

import pytest

from ringsim.core.errors import RingsimError
from ringsim.cost.topology import load, parse, presets


def test_presets_load_and_cite_their_sources():
    assert presets()[0] == "flat"
    assert set(presets()) >= {"flat", "dgx-h100", "dgx-h200", "pcie-gen4", "ethernet-100g"}
    for name in presets():
        topo = load(name)
        assert topo.name == name and topo.sources and topo.measured
        assert topo.levels and all(lv.alpha >= 0 and lv.bandwidth > 0 for lv in topo.levels.values())


def test_dgx_numbers_are_the_datasheet_line_rates():
    h100, h200 = load("dgx-h100"), load("dgx-h200")
    for topo in (h100, h200):
        assert topo.gpus_per_node == 8
        assert topo.level("inside").bandwidth == 450e9  # 900 GB/s bidirectional NVLink 4
        assert topo.level("across").bandwidth == 50e9  # one 400 Gb/s NDR NIC per GPU
        assert "tuning.cc" in topo.sources and "nccl-tests issue 290" in topo.measured
    assert h200.reduce_bandwidth > h100.reduce_bandwidth  # HBM3e 4.8 TB/s vs HBM3 3.35 TB/s


def test_nodes_and_levels():
    dgx = load("dgx-h100")
    assert dgx.nodes(32) == 4 and dgx.nodes(9) == 2 and dgx.node_size(1, 9) == 1
    assert dgx.node(7) == 0 and dgx.node(8) == 1
    with pytest.raises(RingsimError, match="pcie-gen4 has no across nodes level"):
        load("pcie-gen4").check_gpus(16)


def test_user_file(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('gpus_per_node = 4\nreduce_bandwidth = "inf"\n'
                    '[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n'
                    '[across]\nalpha = "10us"\nbandwidth = "200Gb/s"\n')
    topo = load(str(path))
    assert topo.name == "mine" and topo.gamma == 0 and topo.level("across").bandwidth == 25e9


@pytest.mark.parametrize("text, words", [
    ("[inside]\nalpha = '1us'\n", "needs bandwidth"),
    ("gpus_per_node = 0\n[inside]\nalpha='1us'\nbandwidth='1GB/s'", "from 1 to 1,000,000"),
    ("colour = 'red'\n[inside]\nalpha='1us'\nbandwidth='1GB/s'", "unknown field 'colour'"),
    ("[inside]\nalpha='1 parsec'\nbandwidth='1GB/s'", "unknown unit"),
    ("[inside\n", "not valid TOML"), ("name = 'x'\n", "needs an \\[inside\\] or an \\[across\\]")])
def test_bad_files_get_one_line(text, words):
    with pytest.raises(RingsimError, match=words) as caught:
        parse(text, "t")
    assert "\n" not in str(caught.value)


def test_unknown_topology():
    with pytest.raises(RingsimError, match="unknown topology 'dgx-h900'; choose one of: flat"):
        load("dgx-h900")
    with pytest.raises(RingsimError, match="cannot read topology file"):
        load("/nonexistent/x.toml")
