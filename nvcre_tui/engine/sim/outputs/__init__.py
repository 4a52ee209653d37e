"""Writers of real tool output from numbers: what simulated pods print, read back by engine.parsers."""

from __future__ import annotations

from nvcre_tui.engine.sim.outputs.dcgm import LEVEL4_TESTS, GpuOutcome, write_dcgm_json
from nvcre_tui.engine.sim.outputs.dcgm_table import write_dcgm_table
from nvcre_tui.engine.sim.outputs.kubelet import kubelet_prefix
from nvcre_tui.engine.sim.outputs.nccl import NcclFormat, NcclRun, bus_factor, write_nccl_json, write_nccl_log
from nvcre_tui.engine.sim.outputs.nccl_format import LAYOUTS
from nvcre_tui.engine.sim.outputs.training import StepSample, write_megatron_log, write_nemo_log

__all__ = [
    "LAYOUTS",
    "LEVEL4_TESTS",
    "GpuOutcome",
    "NcclFormat",
    "NcclRun",
    "StepSample",
    "bus_factor",
    "kubelet_prefix",
    "write_dcgm_json",
    "write_dcgm_table",
    "write_megatron_log",
    "write_nccl_json",
    "write_nccl_log",
    "write_nemo_log",
]
