"""retrograd.optim: optimizers and learning-rate schedulers with torch.optim's API."""

from retrograd.optim.optimizer import Optimizer
from retrograd.optim.sgd import SGD
from retrograd.optim.adam import Adam
from retrograd.optim.adamw import AdamW
from retrograd.optim.adadelta import Adadelta
from retrograd.optim.adamax import Adamax
from retrograd.optim.nadam import NAdam
from retrograd.optim.radam import RAdam
from retrograd.optim.rmsprop import RMSprop
from retrograd.optim.adagrad import Adagrad
from retrograd.optim.lbfgs import LBFGS
from retrograd.optim import lr_scheduler

__all__ = ["Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS", "NAdam", "Optimizer",
           "RAdam", "RMSprop", "SGD", "lr_scheduler"]
