"""Expert settings for Hadoop MapReduce (LocalJobRunner): hand advice and a rule-based script.

``manual`` follows the usual MapReduce advice (a larger sort buffer and merge factor, compressed
map outputs with a fast codec, the combiner on, more reducers). ``script`` derives values from
the machine: one map and one reduce slot per core, reducers = cores, sort buffer sized so that
all concurrent map buffers fit in a fifth of the heap, heap an eighth of RAM (capped). Both
return partial configurations restricted to the knobs of ``space``, clipped into range.
"""

from __future__ import annotations

from harness.hosts.machine import Machine
from harness.space import Config, Space

__all__ = ["manual", "script"]


def manual(space: Space, machine: Machine) -> Config:
    """Hand settings from widely given MapReduce advice (independent of the job)."""
    return space.fit(
        {
            "mapreduce.task.io.sort.mb": 256,
            "mapreduce.task.io.sort.factor": 64,
            "mapreduce.map.sort.spill.percent": 0.9,
            "mapreduce.job.reduces": 4,
            "mapreduce.map.output.compress": True,
            "mapreduce.map.output.compress.codec": "snappy",
            "harness.combiner": True,
            "io.file.buffer.size": 128,
            "mapreduce.reduce.shuffle.parallelcopies": 10,
            "jvm.heap_mb": 2048,
        }
    )


def script(space: Space, machine: Machine) -> Config:
    """Rules of thumb computed from the machine (cores, RAM)."""
    cores = max(1, machine.cores)
    heap = max(512, min(machine.ram_mib // 8, 4096))
    return space.fit(
        {
            "mapreduce.local.map.tasks.maximum": cores,
            "mapreduce.local.reduce.tasks.maximum": cores,
            "mapreduce.job.reduces": cores,
            "mapreduce.task.io.sort.mb": heap // (5 * cores),
            "mapreduce.task.io.sort.factor": 50,
            "mapreduce.input.fileinputformat.split.maxsize": 8,  # enough splits to use every slot
            "mapreduce.map.output.compress": False,  # local disk is fast; CPU is scarce
            "harness.combiner": True,
            "jvm.heap_mb": heap,
            "jvm.gc": "Parallel",
            "jvm.parallel_gc_threads": cores,
            "mapreduce.fileoutputcommitter.algorithm.version": 2,
        }
    )
