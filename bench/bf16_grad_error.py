#!/usr/bin/env python3
"""How far PyTorch's bf16 autocast puts one training step's gradient from fp32: ||g_bf16 - g_fp32|| / ||g_fp32||
over all parameters, the yardstick for tt's bf16 gradient test (tests/train/bf16_training_test.cpp).

usage: ~/.cache/tt-anchor-venv/bin/python bench/bf16_grad_error.py [--init xavier|torch] [--seeds 1,2,3]
  (the venv ../shared/bench/run_anchor_pypi.sh makes). --init xavier (default) initialises as tt does
  (Xavier-uniform matrices, zero biases, embeddings N(0, d^-1/2)); torch keeps PyTorch's own init.
Models: tt's test model (d 32, ff 64, 2 heads, 2+2 layers, vocab 24, batch 8 x 9 -> 7), tiny and small
(batch 64 x 32 -> 32, vocab 8000), no dropout, label smoothing 0.1, 2 threads.
"""
import argparse, os, sys

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get('ANCHOR_DIR', os.path.join(here, '..', '..', 'shared', 'bench')))
from nmt_model import TransformerNMT  # noqa: E402

MODELS = {'test': (32, 2, 64, 2, 24, 8, 9, 7), 'tiny': (128, 4, 256, 4, 8000, 64, 32, 32),
          'small': (256, 4, 1024, 3, 8000, 64, 32, 32)}


def error(d, h, ff, layers, V, B, S, T, seed, init):
    torch.manual_seed(seed)
    model = TransformerNMT(d, h, ff, layers, layers, V, dropout=0.0)
    if init == 'xavier':
        for name, p in model.named_parameters():
            if p.dim() == 2 and name != 'emb.weight':
                torch.nn.init.xavier_uniform_(p)
            elif name.endswith('bias'):
                torch.nn.init.zeros_(p)
    src, tgt = torch.randint(4, V, (B, S)), torch.randint(4, V, (B, T + 1))
    grads = []
    for amp in (False, True):
        model.zero_grad()
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=amp):
            logits = model(src, tgt[:, :-1])
        F.cross_entropy(logits.float().reshape(-1, V), tgt[:, 1:].reshape(-1), label_smoothing=0.1).backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    return ((grads[1] - grads[0]).norm() / grads[0].norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--init', choices=['xavier', 'torch'], default='xavier')
    ap.add_argument('--seeds', default='1,2,3')
    args = ap.parse_args()
    torch.set_num_threads(2)
    seeds = [int(s) for s in args.seeds.split(',')]
    print(f'torch {torch.__version__}, bf16 autocast vs fp32, init {args.init}: relative gradient error per seed')
    for name, dims in MODELS.items():
        print(f'{name:<6}', ' '.join(f'{error(*dims, s, args.init):.4f}' for s in seeds))


if __name__ == '__main__':
    main()
