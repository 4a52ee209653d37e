"""An nccl-tests run whose network traffic took NCCL's Socket transport measured TCP, not the nodes' RDMA fabric: on AWS
without aws-ofi-nccl or the EFA devices, on GKE without the GPUDirect-TCPX/TCPXO plugin and its NICs, NCCL falls back to
it silently and the run still passes. The parse result says so in a note (and so the run's completion message and the
report) when its connection lines say "via NET/Socket", or its transport was Socket across several hosts; a single
host whose traffic needs no network, or another transport, says nothing."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.parsers.nccl import parse_nccl

HEAD = """# nThread 1 nGpus 1 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4101 on    gpu-n01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4102 on    HOST2 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
{prefix}gpu-n01:4101:4101 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
{prefix}gpu-n01:4101:4101 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>
{prefix}gpu-n01:4101:4101 [0] NCCL INFO Using network NETWORK
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    1000.0    1.05    1.05      0    1000.0    1.05    1.05      0
  1073741824     268435456     float     sum      -1   400000    2.68    2.68      0   400000    2.68    2.68      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 1.87
#
"""


SOCKET_NOTE = ("nccl: NCCL's network transport was Socket (TCP over the pods' interfaces), not RDMA, EFA or GPUDirect: "
               "its traffic over the network measured TCP (the image's NCCL network plugin, NCCL_NET_PLUGIN and the pods' RDMA "
               "devices decide)")


def _notes(network: str, host2: str = "gpu-n02", prefix: str = "") -> tuple[str, ...]:
    return parse_nccl(HEAD.replace("NETWORK", network).replace("HOST2", host2).replace("{prefix}", prefix)).notes()


@pytest.mark.parametrize("prefix", ["", "[1,0]<stdout>:", "2026-01-01T00:00:00.000000000Z "])
def test_a_run_across_hosts_over_the_socket_transport_says_it_measured_tcp(prefix: str) -> None:
    notes = _notes("Socket", prefix=prefix)
    assert notes == (SOCKET_NOTE,)
    assert parse_nccl(HEAD.replace("NETWORK", "Socket").replace("HOST2", "gpu-n02").replace("{prefix}", prefix)).passed  # a note, not a failure


@pytest.mark.parametrize("network", ["IB", "AWS Libfabric", "Libfabric", "FasTrak", "GPUDirectTCPX"])
def test_another_transport_says_nothing(network: str) -> None:
    assert _notes(network) == ()


def test_one_host_says_nothing_its_traffic_needs_no_network() -> None:
    assert _notes("Socket", host2="gpu-n01") == ()


@pytest.mark.parametrize(("via", "noted"), [("NET/Socket/0", True), ("NET/IB/0/GDRDMA", False), ("NET/AWS Libfabric/0/GDRDMA", False),
                                            ("P2P/CUMEM/read", False), ("NET/FasTrak/0", False)])
def test_a_loopback_run_whose_connections_went_over_the_socket_transport_says_it_tested_no_nic(via: str, noted: bool) -> None:
    """nccl-loopback disables P2P and SHM so one node's traffic takes the network path, to test its NICs: over the
    Socket transport it goes through the kernel's TCP stack and tests none."""
    text = HEAD.replace("NETWORK", "Socket").replace("HOST2", "gpu-n01").replace("{prefix}", "")
    connection = f"gpu-n01:4101:4150 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via {via}\n"
    using = "gpu-n01:4101:4101 [0] NCCL INFO Using network Socket\n"
    assert using in text
    text = text.replace(using, using + connection)
    assert parse_nccl(text).notes() == ((SOCKET_NOTE,) if noted else ())
