"""``pytorch.DataLoader``: a torch DataLoader whose batches the Trainer shards across ranks and
can resume in the middle of an epoch.

The order of batches is a pure function of (seed, epoch, batch size, replicas, rank): a run
resumed from a checkpoint taken after N batches starts its loader at batch N and sees exactly the
batches an uninterrupted run would have seen, without reading the skipped ones.
"""

import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import torch
import torch.utils.data

#: What a batch may be: a tensor, a sequence of tensors, or a dict of them.
TorchData = Union[Dict[str, torch.Tensor], Sequence[torch.Tensor], torch.Tensor]

# The seed of shuffled loaders: the trial seed, set by pytorch.init().
_default_seed = 0


def _set_default_seed(seed: int) -> None:
    global _default_seed
    _default_seed = int(seed)


class _EpochBatches:
    """The batches (lists of dataset indices) of one epoch, computed on demand."""

    def __init__(self, loader: "DataLoader", seed: int) -> None:
        self._loader = loader
        self._seed = seed
        self._cache_epoch = -1
        self._cache: List[List[int]] = []

    def __len__(self) -> int:
        return self._loader._batches_per_epoch()

    def get(self, epoch: int) -> List[List[int]]:
        if epoch != self._cache_epoch:
            self._cache = self._loader._epoch_batches(epoch, self._seed)
            self._cache_epoch = epoch
        return self._cache


class _ShardedBatchSampler(torch.utils.data.Sampler):
    """Yields the batches of one rank. Global batches are numbered across epochs (epoch e's
    batch i is e * per_epoch + i); rank r of R takes the global batches r, r + R, r + 2R, ... and
    skips its first ``skip``. ``repeat`` makes the stream endless, epoch after epoch."""

    def __init__(self, epochs: _EpochBatches, repeat: bool, skip: int, num_replicas: int,
                 rank: int) -> None:
        self._epochs = epochs
        self._repeat = repeat
        self._skip = skip
        self._replicas = num_replicas
        self._rank = rank

    def __len__(self) -> int:
        per_epoch = len(self._epochs)
        if self._repeat:
            # The length of an epoch as every rank counts it: whole rounds only.
            return max(per_epoch // self._replicas, 1)
        mine = len(range(self._rank, per_epoch, self._replicas))
        return max(mine - self._skip, 0)

    def __iter__(self) -> Iterator[List[int]]:
        per_epoch = len(self._epochs)
        if per_epoch == 0:
            return
        g = self._rank + self._skip * self._replicas
        while True:
            epoch, i = divmod(g, per_epoch)
            if epoch > 0 and not self._repeat:
                return
            yield self._epochs.get(epoch)[i]
            g += self._replicas


class DataLoader:
    """
    ``determined.pytorch.DataLoader`` takes the arguments of ``torch.utils.data.DataLoader``;
    return it from ``build_training_data_loader()`` and ``build_validation_data_loader()``. The
    Trainer turns it into a torch DataLoader that gives each rank its share of the batches and,
    after a resume, starts where the checkpoint left off.

    ``shuffle=True`` shuffles each epoch with a permutation seeded by the trial seed and the
    epoch number (or by ``generator``'s initial seed when one is given).
    """

    def __init__(
        self,
        dataset: torch.utils.data.Dataset,
        batch_size: Optional[int] = 1,
        shuffle: bool = False,
        sampler: Optional[torch.utils.data.Sampler] = None,
        batch_sampler: Optional[torch.utils.data.BatchSampler] = None,
        num_workers: int = 0,
        collate_fn: Optional[Callable[[List[Any]], Any]] = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Optional[Callable[[int], None]] = None,
        multiprocessing_context: Any = None,
        generator: Optional[torch.Generator] = None,
        *,
        prefetch_factor: Optional[int] = None,
        persistent_workers: bool = False,
    ) -> None:
        if isinstance(dataset, torch.utils.data.IterableDataset):
            raise ValueError(
                "pytorch.DataLoader cannot shard or resume an IterableDataset; return a "
                "torch.utils.data.DataLoader and call "
                "context.experimental.disable_dataset_reproducibility_checks()"
            )
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
        elif batch_size is None:
            raise ValueError("pytorch.DataLoader needs a batch_size (or a batch_sampler)")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        self.drop_last = drop_last
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers

    def __len__(self) -> int:
        """Batches in one epoch on one process (unsharded)."""
        return self._batches_per_epoch()

    def _batches_per_epoch(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)  # type: ignore
        assert self.batch_size
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _epoch_batches(self, epoch: int, seed: int) -> List[List[int]]:
        if self.batch_sampler is not None:
            _set_epoch(self.batch_sampler, epoch)
            return [list(b) for b in self.batch_sampler]
        if self.sampler is not None:
            _set_epoch(self.sampler, epoch)
            indices = list(self.sampler)
        elif self.shuffle:
            g = torch.Generator()
            g.manual_seed(seed * 1_000_003 + epoch)
            indices = torch.randperm(len(self.dataset), generator=g).tolist()  # type: ignore
        else:
            indices = list(range(len(self.dataset)))  # type: ignore
        assert self.batch_size
        bs = self.batch_size
        out = [indices[i : i + bs] for i in range(0, len(indices), bs)]
        if self.drop_last and out and len(out[-1]) < bs:
            out.pop()
        return out

    def get_data_loader(
        self, repeat: bool = False, skip: int = 0, num_replicas: int = 1, rank: int = 0
    ) -> torch.utils.data.DataLoader:
        """The torch DataLoader of rank ``rank`` of ``num_replicas``, starting after ``skip`` of
        its batches; ``repeat`` makes it endless (training)."""
        seed = self.generator.initial_seed() if self.generator is not None else _default_seed
        sampler = _ShardedBatchSampler(_EpochBatches(self, seed), repeat, skip, num_replicas,
                                       rank)
        kwargs: Dict[str, Any] = {}
        if self.num_workers > 0:
            kwargs["persistent_workers"] = self.persistent_workers
            if self.prefetch_factor is not None:
                kwargs["prefetch_factor"] = self.prefetch_factor
        return torch.utils.data.DataLoader(
            self.dataset,
            batch_sampler=sampler,
            num_workers=self.num_workers,
            collate_fn=self.collate_fn,
            pin_memory=self.pin_memory,
            timeout=self.timeout,
            worker_init_fn=self.worker_init_fn,
            multiprocessing_context=self.multiprocessing_context,
            generator=self.generator,
            **kwargs,
        )


def _set_epoch(sampler: Any, epoch: int) -> None:
    if hasattr(sampler, "set_epoch"):
        sampler.set_epoch(epoch)


def data_length(data: Any) -> int:
    """The number of records in a batch: the length of its first tensor."""
    if isinstance(data, torch.Tensor):
        return len(data)
    if isinstance(data, dict):
        return data_length(next(iter(data.values())))
    if isinstance(data, (list, tuple)):
        return data_length(data[0])
    if hasattr(data, "__len__"):
        return len(data)
    raise TypeError(f"cannot tell the length of a batch of type {type(data).__name__}")


def to_device(data: Any, device: torch.device, warned: Optional[set] = None) -> Any:
    """Move every tensor inside ``data`` (nested dicts, lists, tuples) to ``device``."""
    if isinstance(data, torch.Tensor):
        return data.to(device)
    if hasattr(data, "to") and callable(data.to) and not isinstance(data, type):
        try:
            return data.to(device)
        except TypeError:
            return data
    if isinstance(data, dict):
        return {k: to_device(v, device, warned) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(to_device(v, device, warned) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(to_device(v, device, warned) for v in data)
    return data
