"""The 50 training and 50 validation images weight_decay.py draws (DEShawResearch/PACBayesHyperOpt).

run_fit calls seed_everything(0) then fetch_MNIST_data / fetch_CIFAR_data, which build
DataLoader(trainset, batch_size=50, shuffle=True, num_workers=2) and take its first two batches.
With torch 1.2 (the code's "pytorch 1.2"), creating the iterator draws the workers' base seed,
torch.empty((), dtype=torch.int64).random_() (two 32-bit mt19937 outputs), and the first batch
then calls RandomSampler's torch.randperm(n) on the default CPU generator: indices [0:50] are the
training images, [50:100] the validation images. This script replays those two calls on the
default generator (later torch versions give the sampler its own generator, so a DataLoader
itself would draw other images). Usage: python3 torchdraw.py N  -> the 100 indices, one a line.
"""
import sys

import torch

torch.manual_seed(0)
torch.empty((), dtype=torch.int64).random_()
for i in torch.randperm(int(sys.argv[1]))[:100].tolist():
    print(i)
