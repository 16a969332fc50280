"""retrograd.utils.data: datasets, samplers and the DataLoader (torch.utils.data's API)."""

from retrograd.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from retrograd.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from retrograd.utils.data.dataloader import (
    DataLoader,
    default_collate,
    default_convert,
    get_worker_info,
)
from retrograd.utils.data.distributed import DistributedSampler

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "default_collate", "default_convert", "get_worker_info", "random_split"]
