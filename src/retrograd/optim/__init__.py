"""retrograd.optim: optimizers and learning-rate schedulers with torch.optim's API."""

from retrograd.optim.optimizer import Optimizer
from retrograd.optim.sgd import SGD
from retrograd.optim.adam import Adam
from retrograd.optim.adamw import AdamW
from retrograd.optim.rmsprop import RMSprop
from retrograd.optim.adagrad import Adagrad
from retrograd.optim import lr_scheduler

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
