"""--count-ops on the Python side: a few more steps after the measured ones, each alone under PyTorch's profiler with
the configuration bench/trace/op_counts.cpp gives the C++ row (Kineto, memory events on, nothing else), and each
step's events sorted the same way: ATen operators by name (nested calls included), allocations per device type
(`[memory]` events of a positive size), and on a GPU the kernels, copies and sets it ran and the CUDA runtime and
driver calls that launched them. Only the raw counts go into result.json; the C++ side summarises both rows with one
function (op_counts_json), so they compare op for op.
"""

from failure import describe
from timers import synchronize
from torch._C._profiler import _ExperimentalConfig
from torch.autograd import (
    DeviceType,
    ProfilerActivity,
    ProfilerConfig,
    ProfilerState,
    _disable_profiler,
    _enable_profiler,
    _prepare_profiler,
)

MEMORY_EVENT = "[memory]"  # an allocator's report: nbytes > 0 an allocation, < 0 a free


def is_cuda_api_call(name):
    """A CUDA runtime (cudaXxx) or driver (cuXxx) call, by its name, as bench/trace/op_counts.cpp decides it."""
    return (name.startswith("cuda") and name[4:5].isupper()) or (name.startswith("cu") and name[2:3].isupper())


def profiler_config():
    """torch.autograd.profiler.profile's config() with its arguments spelled out: state, report_input_shapes,
    profile_memory, with_stack, with_flops, with_modules, experimental_config, trace_id."""
    return ProfilerConfig(ProfilerState.KINETO, False, True, False, False, False, _ExperimentalConfig(), "")


def count_events(events):
    """One step's counts: {aten_ops: {name: n}, allocations: {device: {count, bytes}}, device_activities: {name: n},
    runtime_calls: {name: n}}."""
    aten_ops, allocations, activities, runtime_calls = {}, {}, {}, {}
    for e in events:
        name = e.name()
        if name == MEMORY_EVENT:
            nbytes = e.nbytes()  # a method of _KinetoEvent, though torch's .pyi leaves it out
            if nbytes > 0:
                a = allocations.setdefault(e.device_type().name.lower(), {"count": 0, "bytes": 0})
                a["count"] += 1
                a["bytes"] += nbytes
        elif name.startswith("aten::"):
            aten_ops[name] = aten_ops.get(name, 0) + 1
        elif e.device_type() == DeviceType.CUDA:  # a kernel, memcpy or memset
            activities[name] = activities.get(name, 0) + 1
        elif is_cuda_api_call(name):  # the host's side: the call that launched a kernel, a graph or a copy
            runtime_calls[name] = runtime_calls.get(name, 0) + 1
    return {
        "aten_ops": aten_ops,
        "allocations": allocations,
        "device_activities": activities,
        "runtime_calls": runtime_calls,
    }


def count_step_work(step, device, steps):
    """Runs `steps` more steps, each alone under the profiler (synchronised before it stops); the step's phase marks
    off, as the C++ row's. A failure costs only the counts: {status: unavailable, reason}."""
    activities = {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if device.type == "cuda" else set())
    step.marks = None
    counted = []
    try:
        synchronize(device)  # nothing of the measured steps is still running into the first count
        for _ in range(steps):
            _prepare_profiler(profiler_config(), activities)
            _enable_profiler(profiler_config(), activities)
            try:
                step()
                synchronize(device)  # the step's kernels end inside its own profile
            finally:
                result = _disable_profiler()
            counted.append(count_events(result.events()))
    except Exception as e:  # the measured steps are kept; a count that fails costs only the count
        return {"status": "unavailable", "reason": "the counted pass failed: " + describe(e)}
    for c in counted:
        if device.type != "cuda":
            c["device_activities"] = c["runtime_calls"] = None
    return {"status": "ok", "steps": counted}
