"""Overhead of determined.pytorch's Trainer over a plain torch loop: the same model, data,
batch size and DDP (gloo on CPU), timed per batch.

    python3 harness/bench/trial_overhead.py [--slots 2] [--batches 400]

runs both under torchrun (off-cluster: no master) and prints the wall time per batch of each and
their ratio."""

import argparse
import os
import subprocess
import sys
import time

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLOBAL_BATCH = 64
# Batches before timing starts; also the Trainer's reporting period (Determined's default is 100).
WARMUP = 100


def data():
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(8192, 256, generator=g)
    y = (x[:, 0] > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def model():
    from torch import nn

    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 2))


def plain(batches: int) -> float:
    import torch
    import torch.distributed as dist
    from torch import nn

    dist.init_process_group("gloo")
    size, rank = dist.get_world_size(), dist.get_rank()
    torch.manual_seed(0)
    m = nn.parallel.DistributedDataParallel(model())
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    ds = data()
    sampler = torch.utils.data.distributed.DistributedSampler(ds, size, rank, shuffle=False)
    loader = torch.utils.data.DataLoader(ds, batch_size=GLOBAL_BATCH // size, sampler=sampler)
    done, start = 0, None
    while done < batches:
        for x, y in loader:
            if done == WARMUP:
                start = time.perf_counter()  # after warm-up
            loss = nn.functional.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            done += 1
            if done == batches:
                break
    took = time.perf_counter() - start
    dist.destroy_process_group()
    return took / (batches - WARMUP)


def trainer(batches: int) -> float:
    import logging

    import torch
    from torch import nn

    from determined import pytorch

    logging.getLogger("determined").setLevel(logging.WARNING)
    times = {}

    class Timer(pytorch.PyTorchCallback):
        def on_training_workload_end(self, avg_metrics, batch_metrics):
            if avg_metrics["batches"] == WARMUP:
                times["start"] = time.perf_counter()

    class Trial(pytorch.PyTorchTrial):
        def __init__(self, context):
            self.context = context
            torch.manual_seed(0)
            self.m = context.wrap_model(model())
            self.opt = context.wrap_optimizer(torch.optim.SGD(self.m.parameters(), lr=0.01))

        def build_training_data_loader(self):
            return pytorch.DataLoader(data(), batch_size=self.context.get_per_slot_batch_size())

        def build_validation_data_loader(self):
            return pytorch.DataLoader(data(), batch_size=self.context.get_per_slot_batch_size())

        def train_batch(self, batch, epoch_idx, batch_idx):
            x, y = batch
            loss = nn.functional.cross_entropy(self.m(x), y)
            self.context.backward(loss)
            self.context.step_optimizer(self.opt)
            return {"loss": loss}

        def evaluate_full_dataset(self, data_loader):
            times["end"] = time.perf_counter()  # training is over
            return {"validation_loss": 0.0}

        def build_callbacks(self):
            return {"timer": Timer()}

    with pytorch.init(hparams={"global_batch_size": GLOBAL_BATCH}) as ctx:
        pytorch.Trainer(Trial(ctx), ctx).fit(max_length=pytorch.Batch(batches),
                                             reporting_period=pytorch.Batch(WARMUP),
                                             checkpoint_policy="none")
    if ctx.distributed.rank == 0:
        return (times["end"] - times["start"]) / (batches - WARMUP)
    return 0.0


def launch(mode: str, slots: int, batches: int) -> float:
    env = dict(os.environ, PYTHONPATH=HARNESS, OMP_NUM_THREADS="1", HOME=os.environ.get(
        "TMPDIR", "/tmp"))
    env.pop("DET_ALLOCATION_ID", None)
    port = 29500 + os.getpid() % 1000 + (1 if mode == "trainer" else 0)
    out = subprocess.run(
        [sys.executable, "-m", "determined.launch._torchrun", f"--nproc_per_node={slots}",
         "--master_addr=127.0.0.1", f"--master_port={port}", __file__, "--run", mode,
         "--batches", str(batches)],
        env=dict(env, DET_DIST_PORT=str(port + 100)), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{mode} failed:\n{out.stdout}\n{out.stderr}")
    for line in out.stdout.splitlines():
        if line.startswith("SECONDS_PER_BATCH "):
            return float(line.split()[1])
    sys.exit(f"{mode} printed no timing:\n{out.stdout}\n{out.stderr}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--slots", type=int, default=2)
    p.add_argument("--batches", type=int, default=1100)
    p.add_argument("--run")
    args = p.parse_args()
    if args.run:
        secs = plain(args.batches) if args.run == "plain" else trainer(args.batches)
        if int(os.environ.get("RANK", "0")) == 0:
            print(f"SECONDS_PER_BATCH {secs}")
        return
    a = launch("plain", args.slots, args.batches)
    b = launch("trainer", args.slots, args.batches)
    print(f"plain torch loop: {a * 1e3:.3f} ms/batch ({args.slots} slots, CPU, gloo)")
    print(f"pytorch.Trainer:  {b * 1e3:.3f} ms/batch")
    print(f"overhead: {100 * (b / a - 1):+.1f}%")


if __name__ == "__main__":
    main()
