"""Megatron-LM and NeMo 2 training pod logs from per-step numbers and checkpoint events.

One `StepSample` is one logged line (Megatron logs every `log_interval` iterations; the sample's
step time is the per-iteration average it prints). Time advances by step time x interval per line
and by each checkpoint's save duration, starting after `startup_sec`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from nvcre_tui.engine.sim.outputs.kubelet import kubelet_prefix


@dataclass(frozen=True)
class StepSample:
    """What one logged step line reports."""

    step_time_sec: float
    tflops_per_gpu: float | None
    loss: float


class _Clock:
    """The moments lines are written, and how they are stamped."""

    def __init__(self, start: datetime, kubelet: bool, rng: random.Random) -> None:
        self.now, self.kubelet, self.rng = start, kubelet, rng

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def line(self, text: str) -> str:
        self.now += timedelta(microseconds=self.rng.randint(5, 900))  # lines never share a timestamp
        return (kubelet_prefix(self.now) if self.kubelet else "") + text + "\n"

    def bracket(self) -> str:
        return f"[{self.now:%Y-%m-%d %H:%M:%S.%f}]"

    def nemo(self, level: str = "I") -> str:
        return f"[NeMo {level} {self.now:%Y-%m-%d %H:%M:%S} nemo_logging:393]"


def write_megatron_log(samples: Sequence[StepSample], rng: random.Random, *, start: datetime,
                       log_interval: int = 10, first_step: int | None = None, total_steps: int | None = None,
                       world_size: int = 8, tensor_parallel: int = 1, pipeline_parallel: int = 1,
                       checkpoints: Mapping[int, float] | None = None, resume_from: int | None = None,
                       startup_sec: float = 90.0, kubelet: bool = True, global_batch: int = 32,
                       checkpoint_dir: str = "/mnt/workspace/checkpoints",
                       exit_after: float | None = None, exit_minutes: float | None = None) -> Iterator[str]:
    """The log of one Megatron `pretrain_gpt.py` process; `checkpoints` maps step -> save seconds. `exit_after`:
    seconds after the last line when --exit-duration-in-mins stops it, having trained `exit_minutes`."""
    clock = _Clock(start, kubelet, rng)
    base = resume_from or 0
    first = first_step if first_step is not None else base + log_interval
    total = total_steps or first + log_interval * max(len(samples) - 1, 0)
    data_parallel = max(world_size // (tensor_parallel * pipeline_parallel), 1)
    yield clock.line(f"using world size: {world_size}, data-parallel size: {data_parallel}, context-parallel size: 1, "
                     f"hierarchical context-parallel sizes: None, tensor-model-parallel size: {tensor_parallel}, "
                     f"encoder-tensor-model-parallel size: 0, pipeline-model-parallel size: {pipeline_parallel}, "
                     "encoder-pipeline-model-parallel size: 0")
    yield clock.line("> building GPT model ...")
    if resume_from is not None:
        yield clock.line(f" loading distributed checkpoint from {checkpoint_dir} at iteration {resume_from}")
        yield clock.line(f"  successfully loaded checkpoint from {checkpoint_dir} [ t 1/{tensor_parallel}, "
                         f"p 1/{pipeline_parallel} ] at iteration {resume_from}")
    clock.advance(startup_sec)
    yield clock.line(f"[before the start of training step] datetime: {clock.now:%Y-%m-%d %H:%M:%S}")
    for index, sample in enumerate(samples):
        step = first + index * log_interval
        clock.advance(sample.step_time_sec * log_interval)
        throughput = "" if sample.tflops_per_gpu is None else \
            f" throughput per GPU (TFLOP/s/GPU): {sample.tflops_per_gpu:.1f} |"
        yield clock.line(
            f" {clock.bracket()} iteration {step:8d}/{total:8d} | consumed samples: {step * global_batch:12d} |"
            f" elapsed time per iteration (ms): {sample.step_time_sec * 1000:.1f} |{throughput}"
            f" learning rate: {6e-4 * (1 - step / (total + 1)):.6E} | global batch size: {global_batch:5d} |"
            f" lm loss: {sample.loss:.6E} | loss scale: 1.0 | grad norm: {rng.uniform(0.8, 3.0):.3f} |"
            f" number of skipped iterations: {0:3d} | number of nan iterations: {0:3d} |")
        if checkpoints and step in checkpoints:
            yield clock.line(f"{clock.bracket()} saving checkpoint at iteration {step:7d} to {checkpoint_dir} "
                             "in torch_dist format")
            clock.advance(checkpoints[step])
            yield clock.line(f"{clock.bracket()}   scheduled an async checkpoint save at iteration {step:7d} "
                             f"to {checkpoint_dir}")
    if exit_after is not None:
        clock.advance(exit_after)
        yield clock.line(f"[exiting program after {exit_minutes or 0.0} minutes] datetime: {clock.now:%Y-%m-%d %H:%M:%S} ")


def write_nemo_log(samples: Sequence[StepSample], rng: random.Random, *, start: datetime, first_step: int = 0,
                   total_steps: int | None = None, checkpoints: Mapping[int, float] | None = None,
                   resume_from: int | None = None, startup_sec: float = 60.0, kubelet: bool = True,
                   global_batch: int = 32, checkpoint_dir: str = "/results/checkpoints") -> Iterator[str]:
    """The log of one NeMo 2 (Lightning) training process; one sample per step, starting at `first_step`."""
    clock = _Clock(start, kubelet, rng)
    total = total_steps or first_step + len(samples)
    yield clock.line(f"{clock.nemo()} Experiments will be logged at /results/nemotron/{start:%Y-%m-%d_%H-%M-%S}")
    yield clock.line(f"{clock.nemo('W')} The number of process groups is larger than the number of GPUs")
    if resume_from is not None:
        yield clock.line(f"{clock.nemo()} Restoring model weights from {checkpoint_dir}/step={resume_from}.ckpt")
    clock.advance(startup_sec)
    for index, sample in enumerate(samples):
        step = first_step + index
        clock.advance(sample.step_time_sec)
        tflops = "" if sample.tflops_per_gpu is None else f" | TFLOPS_per_GPU: {sample.tflops_per_gpu:.1f}"
        yield clock.line(
            f"Training epoch 0, iteration {step}/{total - 1} | lr: {6e-4 * (1 - step / (total + 1)):.3g} |"
            f" global_batch_size: {global_batch} | global_step: {step} | reduced_train_loss: {sample.loss:.4g} |"
            f" train_step_timing in s: {sample.step_time_sec:.3f}{tflops} |"
            f" consumed_samples: {(step + 1) * global_batch}")
        if checkpoints and step in checkpoints:
            begun = clock.now.timestamp()
            clock.advance(checkpoints[step])
            yield clock.line(f"{clock.nemo()} Global Checkpoint Save : Rank: 0 : Iteration: {step} : "
                             f"Start time: {begun:.3f}s : Save duration: {checkpoints[step]:.3f}s")
            yield clock.line(f"{clock.nemo()} Successfully saved checkpoint from iteration {step} to "
                             f"{checkpoint_dir}/step={step}.ckpt")
