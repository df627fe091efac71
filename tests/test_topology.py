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
    with pytest.raises(RingsimError, match=r"pcie-gen4 has no \[across\] level \(the link across nodes\)"):
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


def _network(name: str, across: str, inside: str = "450GB/s") -> str:
    return (f'gpus_per_node = 8\n[inside]\nalpha = "1us"\nbandwidth = "{inside}"\n'
            f'[across]\nname = "{name}"\nalpha = "3us"\nbandwidth = "{across}"\n')


def test_a_network_rate_written_in_bytes_for_bits_is_refused_in_one_line():
    # The name says 200 Gb/s; "200GB/s" is eight times that, 1.6 Tb/s.
    with pytest.raises(RingsimError) as caught:
        parse(_network("200 Gb/s per GPU", "200GB/s"), "slip")
    assert str(caught.value) == (
        'topology slip: [across] bandwidth "200GB/s" is 1.6 Tb/s per GPU, 8 times the 200 Gb/s '
        'its name says: B is bytes, b bits, so write "200Gb/s"')


@pytest.mark.parametrize("rate, shown, hint", [
    ("200000Gb/s", "200 Tb/s", "check the number and its unit"),
    ("300GB/s", "2.4 Tb/s", "if 300 Gb/s was meant, write it with b (bits), not B (bytes)"),
    # Written in bits already: no hint to write it in bits.
    ("1.7Tb/s", "1.7 Tb/s", "check the number and its unit"),
    ("2Tb/s", "2 Tb/s", "check the number and its unit"),
    # Just past the bound: as many digits as show that it is past it.
    ("1.6000001Tb/s", "1.6000001 Tb/s", "check the number and its unit"),
    ("200.001GB/s", "1.60001 Tb/s", "if 200 Gb/s was meant, write it with b (bits), not B (bytes)"),
])
def test_a_network_faster_than_any_nic_is_refused_naming_the_level_and_the_value(rate, shown, hint):
    with pytest.raises(RingsimError) as caught:
        parse(_network("my network", rate, inside="900GB/s"), "fast")
    assert str(caught.value) == (
        f'topology fast: [across] bandwidth "{rate}" is {shown} per GPU, faster than any network a '
        f'GPU has (at most 1.6 Tb/s, 200.00 GB/s each way); {hint}')


@pytest.mark.parametrize("rate", ["1.6Tb/s", "200GB/s", "inf"])
def test_the_bound_itself_and_a_free_network_are_taken(rate):
    topo = parse(_network("two ConnectX-8", rate), "edge")  # a name that states no rate
    assert topo.level("across").bandwidth in (200e9, float("inf")) and topo.doubts() == []


def test_a_network_faster_than_the_node_is_a_one_line_warning_not_an_error(tmp_path, capsys):
    from ringsim.cli import main
    topo = parse(_network("InfiniBand NDR 400 Gb/s", "400Gb/s", inside="31.5GB/s"), "pcie-box")
    assert topo.doubts() == [
        "topology pcie-box: its network ([across], 50.00 GB/s = 400 Gb/s per GPU) is faster than "
        "the link inside a node ([inside], 31.50 GB/s); some PCIe servers are built so, elsewhere "
        "check the units (Gb/s is bits, GB/s bytes)"]
    path = tmp_path / "pcie-box.toml"
    path.write_text(_network("InfiniBand NDR 400 Gb/s", "400Gb/s", inside="31.5GB/s"))
    for argv in (["compare", "--time"], ["zero", "--params", "7B"], ["timeline"],
                 ["predict", "--sizes", "1MiB"]):
        assert main([*argv, "--topology", str(path), "-g", "16"]) == 0, argv
        err = capsys.readouterr().err
        assert err == f"ringsim {argv[0]}: warning: {topo.doubts()[0]}\n", argv
    # One GPU per node uses no inside level: nothing to compare with.
    one = parse('gpus_per_node = 1\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n'
                '[across]\nalpha = "3us"\nbandwidth = "400Gb/s"\n', "one")
    assert one.doubts() == []


def test_every_shipped_topology_loads_without_a_doubt():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    files = [str(p) for folder in ("ringsim/studies/published/systems", "tests/data/topologies")
             for p in sorted((root / folder).glob("*.toml"))]
    assert len(files) >= 15
    for name in [*presets(), *files]:
        assert load(name).doubts() == [], name


def test_a_word_field_echoes_the_value_it_read_escaped():
    with pytest.raises(RingsimError) as caught:
        parse('arch = "pascal"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "old")
    assert str(caught.value) == ("topology old: arch must be one of volta, ampere, hopper, "
                                 "blackwell, got 'pascal'")
    # Text a file holds reaches the terminal as repr writes it: the escape character as \x1b.
    with pytest.raises(RingsimError) as caught:
        parse('cpu = "\\u001b[2J"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "ansi")
    assert str(caught.value).endswith("got '\\x1b[2J'") and "\x1b" not in str(caught.value)


def test_gpu_memory_is_read_as_zero_reads_it_and_the_presets_of_known_gpus_give_it():
    topo = parse('gpu_memory = "141GB"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "m")
    assert topo.gpu_memory == 141 * 10**9
    assert parse('[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "none").gpu_memory is None
    for text, words in (('"10kB"', "from 1MB to 100TB, got '10kB'"), ('"200TB"', "from 1MB to 100TB"),
                        ("80", "text with a unit in quotes")):
        with pytest.raises(RingsimError, match=words) as caught:
            parse(f'gpu_memory = {text}\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "bad")
        assert str(caught.value).startswith("topology bad: gpu_memory")
    memory = {name: load(name).gpu_memory for name in presets()}
    assert memory == {"flat": None, "ethernet-100g": None, "dgx-a100": 80e9, "dgx-h100": 80e9,
                      "dgx-h200": 141e9, "pcie-gen4": 80e9, "pcie-switches": 24e9}
    for name, size in memory.items():
        if size is not None:  # each preset that gives it says where the figure comes from
            line = load(name).sources.split("GPU memory: ")[1].split(")")[0]
            assert line.startswith(f"{size / 1e9:.0f} GB") and "(NVIDIA " in line, name


def test_a_topology_built_in_python_checks_its_gpu_memory():
    from dataclasses import replace
    with pytest.raises(RingsimError, match="gpu_memory must be from"):
        replace(load("dgx-h100"), gpu_memory=10)
    assert replace(load("flat"), gpu_memory=80 * 10**9).gpu_memory == 80 * 10**9


NIC = 'gpus_per_node = 2\n[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n' \
      '[across]\nalpha = "2us"\nbandwidth = "200Gb/s"\n'


def test_nic_path_is_an_across_field_read_as_pxb_where_absent():
    assert parse(NIC, "near").level("across").nic_path is None  # NCCL's model reads it as pxb
    for path in ("pix", "pxb", "p2c", "phb", "sys"):
        assert parse(NIC + f'nic_path = "{path}"\n', path).level("across").nic_path == path
    # every preset keeps the default: none states its NIC's path
    assert all(load(name).levels.get("across") is None
               or load(name).level("across").nic_path is None for name in presets())


def test_nic_path_is_read_in_any_case_as_nvidia_smi_and_nccl_print_it():
    for written, path in (("SYS", "sys"), ("PIX", "pix"), ("Phb", "phb"), ("P2C", "p2c")):
        assert parse(NIC + f'nic_path = "{written}"\n', "upper").level("across").nic_path == path
    from ringsim.cost.topology_model import Level
    assert Level("across", "x", 1e-6, 1e9, nic_path="SYS").nic_path == "sys"


@pytest.mark.parametrize("value, shown", [('"PCH"', "'PCH'"), ('"c2c"', "'c2c'"), ("3", "3"),
                                          ('"\\u001b[2J"', "'\\x1b[2J'")])
def test_an_unknown_nic_path_is_one_line_that_echoes_it_and_names_the_valid_ones(value, shown):
    with pytest.raises(RingsimError) as caught:
        parse(NIC + f"nic_path = {value}\n", "bad")
    message = str(caught.value)
    assert message == ("topology bad: [across] nic_path must be one of pix, pxb, p2c, phb, sys, "
                       f"got {shown}")
    assert "\n" not in message and "\x1b" not in message


def test_nic_path_on_the_inside_level_is_refused_in_a_file_and_in_python():
    inside = NIC.replace('bandwidth = "100GB/s"\n', 'bandwidth = "100GB/s"\nnic_path = "pxb"\n', 1)
    with pytest.raises(RingsimError, match=r"^topology bad: \[inside\] nic_path: a GPU's path to "
                                           r"its NIC is the network's: give it in \[across\]$"):
        parse(inside, "bad")
    from ringsim.cost.topology_model import Level
    with pytest.raises(RingsimError, match="the inside level's nic_path: a GPU's path"):
        Level("inside", "x", 1e-6, 1e9, nic_path="phb")
    with pytest.raises(RingsimError, match="nic_path must be one of pix, pxb, p2c, phb, sys, "
                                           "got 'far'"):
        Level("across", "x", 1e-6, 1e9, nic_path="far")
    assert Level("across", "x", 1e-6, 1e9, nic_path="sys").nic_path == "sys"


def test_memory_in_bits_is_refused_and_the_memory_example_is_a_memory():
    base = '\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n'
    for text, fix in (('"80Gb"', "80GB"), ('"141 Gb"', "141GB"), ('"1Tb"', "1TB"),
                      ('"512Mb"', "512MB")):
        with pytest.raises(RingsimError) as caught:
            parse(f"gpu_memory = {text}{base}", "bits")
        assert str(caught.value) == (f"topology bits: gpu_memory {text.replace(chr(34), chr(39))} "
                                     f"is in bits (b); memory is counted in bytes: write {fix}")
    with pytest.raises(RingsimError) as caught:
        parse(f"gpu_memory = 80{base}", "bare")
    assert str(caught.value) == ('topology bare: gpu_memory must be text with a unit in quotes, '
                                 'e.g. "80GB", got a number')
    # each quantity's example is of its own kind
    with pytest.raises(RingsimError, match=r'alpha must be text with a unit in quotes, e\.g\. "5us"'):
        parse('[inside]\nalpha = 5\nbandwidth = "1GB/s"\n', "t")
    with pytest.raises(RingsimError, match=r'bandwidth must be text with a unit in quotes, '
                                           r'e\.g\. "450GB/s"'):
        parse('[inside]\nalpha = "5us"\nbandwidth = 1\n', "t")


@pytest.mark.parametrize("name", ["100 Gb/s", "100Gbps", "100 Gbit/s", "100 Gbits/s", "RoCE 100Gb",
                                  "100 GbE", "100GbE", "100G Ethernet", "Ethernet 100G",
                                  "100 Gb/sec"])
def test_a_rate_eight_times_the_named_one_is_refused_however_the_name_spells_bits(name):
    with pytest.raises(RingsimError) as caught:
        parse(_network(name, "100GB/s"), "slip")
    assert str(caught.value) == (
        'topology slip: [across] bandwidth "100GB/s" is 800 Gb/s per GPU, 8 times the 100 Gb/s '
        'its name says: B is bytes, b bits, so write "100Gb/s"')
    assert parse(_network(name, "100Gb/s"), "right").level("across").bandwidth == 12.5e9


@pytest.mark.parametrize("name", ["100GB/s link", "PCIe 4.0 16 GT/s", "H100 NDR", "8x A100 GPUs",
                                  "3.2 GHz hosts"])
def test_a_name_that_states_no_rate_in_bits_raises_no_alarm(name):
    assert parse(_network(name, "100GB/s", inside="900GB/s"), "ok").level("across").bandwidth == 1e11


def test_no_shipped_or_test_topology_file_trips_the_checks():
    from pathlib import Path

    from ringsim.studies import peers
    root = Path(__file__).resolve().parent
    files = [*sorted((root / "data" / "topologies").glob("*.toml")),
             *sorted(Path(peers.system_file("x")).parent.glob("*.toml"))]
    assert len(files) > 10
    for path in files:
        load(str(path))  # raises on a false alarm
    for name in presets():
        load(name)


def test_nics_per_gpu_is_a_whole_number_of_an_across_level():
    assert parse(NIC, "one").level("across").nics_per_gpu is None  # read as 1
    assert parse(NIC + "nics_per_gpu = 4\n", "four").level("across").nics_per_gpu == 4
    for value in ("0", "17", "1.5", '"2"', "true", "1e400"):
        with pytest.raises(RingsimError) as caught:
            parse(NIC + f"nics_per_gpu = {value}\n", "bad")
        assert str(caught.value) == ("topology bad: [across] nics_per_gpu must be a whole "
                                     "number from 1 to 16")
    inside = NIC.replace('bandwidth = "100GB/s"\n', 'bandwidth = "100GB/s"\nnics_per_gpu = 2\n', 1)
    with pytest.raises(RingsimError, match=r"\[inside\] nics_per_gpu: only the \[across\] level"):
        parse(inside, "inside")
    from ringsim.cost.topology_model import Level
    with pytest.raises(RingsimError, match="nics_per_gpu must be"):
        Level("across", "x", 1e-6, 1e9, nics_per_gpu=0)
    # each NIC is a network device of its own to NCCL, at its share of the GPU's rate
    from ringsim.cost.nccl_graph import system
    one = system(parse(NIC, "one"), 4)
    two = system(parse(NIC + "nics_per_gpu = 2\n", "two"), 4)
    assert (two.nics_per_gpu, two.net_bw) == (2, one.net_bw / 2)


def test_word_fields_are_read_in_any_case_as_vendors_write_them():
    topo = parse('cpu = "AMD"\narch = "Hopper"\ngpus_per_node = 8\n[inside]\nkind = "NVLink"\n'
                 'alpha = "1us"\nbandwidth = "450GB/s"\n', "vendor")
    assert (topo.cpu, topo.arch, topo.level("inside").kind) == ("amd", "hopper", "nvlink")
    with pytest.raises(RingsimError) as caught:
        parse('cpu = "AMD64"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "bad")
    assert str(caught.value).startswith("topology bad: cpu must be one of intel, ")
    assert str(caught.value).endswith("got 'AMD64'")


def test_a_look_alike_letter_is_no_word_of_the_file():
    # str.lower() turns the Kelvin sign (U+212A) into an ASCII k: "nvlinK" must not read as nvlink
    for field, value in (("kind", "nvlin\u212a"), ("nic_path", "\u212a")):
        level = "across" if field == "nic_path" else "inside"
        text = (f'gpus_per_node = 8\n[{level}]\nalpha = "1us"\nbandwidth = "1GB/s"\n'
                f'{field} = "{value}"\n')
        with pytest.raises(RingsimError, match=f"{field} must be one of"):
            parse(text, "kelvin")
    with pytest.raises(RingsimError, match="arch must be one of"):
        parse('arch = "BLAC\u212aWELL"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "kelvin")


def test_gpus_sharing_a_node_need_a_link_inside_it():
    text = ('name = "x"\ngpus_per_node = 8\n'
            '[across]\nalpha = "2us"\nbandwidth = "400Gb/s"\n')
    with pytest.raises(RingsimError, match=r"gpus_per_node = 8 puts GPUs together in a node: "
                                           r"give an \[inside\] level"):
        parse(text, "x")
    one = parse(text.replace("gpus_per_node = 8", "gpus_per_node = 1"), "x")
    assert one.nodes(4) == 4
