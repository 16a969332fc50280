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
from retrograd.optim.rprop import Rprop
from retrograd.optim.asgd import ASGD
from retrograd.optim._adafactor import Adafactor
from retrograd.optim.sparse_adam import SparseAdam
from retrograd.optim.muon import Muon
from retrograd.optim import lr_scheduler, swa_utils

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "lr_scheduler", "swa_utils"]
