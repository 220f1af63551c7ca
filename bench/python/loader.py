"""The batch loader, as bench/data/loader.cpp: a background thread stages batches in a ring of host buffers and
next() copies one to the device. The batches are given (row k of `starts` is the k-th step's), so the Python
run reads exactly the windows the C++ run read.
"""

import collections
import threading

import numpy as np
import torch


class Slot:
    def __init__(self, batch_size, seq_len, pinned):
        self.x = torch.empty(batch_size, seq_len, dtype=torch.long, pin_memory=pinned)  # (B, T) inputs
        self.y = torch.empty(batch_size, seq_len, dtype=torch.long, pin_memory=pinned)  # (B, T) targets
        self.copied = None  # async mode: recorded after the copy out of this buffer; refill only once it completed


class Loader:
    """Copy modes: pageable + blocking `.to(device)` (the reference), pinned + blocking (pinned_mode "blocking"),
    pinned + non_blocking on a dedicated copy stream that the compute stream waits on (pinned_mode "async")."""

    def __init__(self, tokens, starts, seq_len, device, pinned=False, pinned_mode="async", prefetch=4):
        """tokens: (N,) uint16 array; starts: (rows, B) int64 array of window starts; device: torch.device."""
        if pinned and device.type != "cuda":
            raise ValueError("pinned host memory needs a CUDA device")
        self.tokens, self.starts, self.device = tokens, starts, device
        self.offsets = np.arange(seq_len + 1)  # a window holds T+1 tokens: targets are inputs shifted by one
        self.slots = [Slot(starts.shape[1], seq_len, pinned) for _ in range(prefetch)]
        self.copy_stream = torch.cuda.Stream(device) if pinned and pinned_mode == "async" else None
        self.free, self.ready = collections.deque(range(prefetch)), collections.deque()
        self.changed = threading.Condition()
        self.stop, self.error, self.staged = False, None, 0
        self.thread = threading.Thread(target=self._produce, name="stepwise-loader", daemon=True)
        self.thread.start()

    def close(self):
        with self.changed:
            self.stop = True
            self.changed.notify_all()
        self.thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _produce(self):
        try:
            if self.device.type == "cuda":
                torch.cuda.set_device(self.device)  # event waits here must not open a context on another GPU
            for row in self.starts:
                with self.changed:
                    self.changed.wait_for(lambda: self.stop or self.free)
                    if self.stop:
                        return
                    index = self.free.popleft()
                slot = self.slots[index]
                if slot.copied is not None:
                    slot.copied.synchronize()  # the previous async copy out of this buffer is done
                windows = self.tokens[row[:, None] + self.offsets]  # (B, T+1) uint16
                slot.x.numpy()[...] = windows[:, :-1]
                slot.y.numpy()[...] = windows[:, 1:]
                with self.changed:
                    self.ready.append(index)
                    self.staged += 1
                    self.changed.notify_all()
        except BaseException as e:  # handed to the step, which fails with it
            with self.changed:
                self.error = e
                self.changed.notify_all()

    def next(self):
        """The next batch (x, y) on the device; waits only for the staging thread, never for the device."""
        with self.changed:
            self.changed.wait_for(lambda: self.error or self.ready or self.staged == len(self.starts))
            if self.error is not None:
                raise RuntimeError(f"the loader thread failed: {self.error}") from self.error
            if not self.ready:
                raise RuntimeError(f"all {len(self.starts)} batches were used")
            index = self.ready.popleft()
        batch = self._to_device(self.slots[index])
        with self.changed:
            self.free.append(index)
            self.changed.notify_all()
        return batch

    def _to_device(self, slot):
        if self.device.type != "cuda":
            # The model reads a private copy, because the staging thread refills the buffer right away.
            return slot.x.clone(), slot.y.clone()
        if self.copy_stream is not None:
            compute = torch.cuda.current_stream(self.device)
            with torch.cuda.stream(self.copy_stream):
                x = slot.x.to(self.device, non_blocking=True)
                y = slot.y.to(self.device, non_blocking=True)
            if slot.copied is None:
                slot.copied = torch.cuda.Event()
            slot.copied.record(self.copy_stream)
            compute.wait_event(slot.copied)  # compute waits on the device, never the host
            # Allocated on the copy stream, used on the compute stream: keep the allocator from reusing them early.
            x.record_stream(compute)
            y.record_stream(compute)
            return x, y
        # Pageable or pinned-blocking: a blocking copy on the current stream, as `.to(device)` in the reference.
        return slot.x.to(self.device), slot.y.to(self.device)


def loader_for(request, tokens, starts, device):
    """The loader a request asks for, over these window starts."""
    return Loader(tokens, starts, request["seq_len"], device, request["pinned_memory"], request["pinned_mode"])
