#!/usr/bin/env python3
"""Writes a Hugging Face MarianMTModel directory with random weights, for testing `tt-convert import-marian`.

    scripts/make-marian-fixture.py OUT_DIR [--shape tiny|opus-mt-en-de] [--seed N] [--expected-lines N]
                                   [--all-tensors]

OUT_DIR gets the files of an OPUS-MT model on the Hugging Face hub: config.json, generation_config.json,
model.safetensors, source.spm, target.spm, vocab.json, tokenizer_config.json. The weights are random; the
two SentencePiece models are small unigram models trained here on the bundled Multi30k text (English
source, German target). vocab.json is built the way OPUS-MT's is: "</s>" = 0, "<unk>" = 1, the pieces of
both SentencePiece models, "<pad>" last (the padding id and the decoder's start token, whose embedding
row is zero, as in the converted OPUS-MT models: Marian starts the decoder from a zero vector).
model.safetensors is as today's Transformers writes it: one copy of the tied embedding
(model.shared.weight), no position tables; --all-tensors writes every tensor of the state dict instead,
as older conversions have them (the position tables, and the embedding under all four of its names).

--shape tiny (the default): 2+2 layers, d_model 32, a vocabulary of a few hundred pieces; a few ordinary
source pieces are left out of vocab.json on purpose, so that they map to <unk> on encoding. OUT_DIR also
gets expected.json: Transformers' tokenization, greedy and beam-4 outputs of 24 source lines and the
teacher-forced logits of the first two (see make_expected; the settings are recorded in the file).

--shape opus-mt-en-de: exactly the configuration and tensor shapes of Helsinki-NLP/opus-mt-en-de (6+6
layers, d_model 512, 8 heads, vocabulary 58,101: the real pieces padded with dummy ones), about 300 MB;
expected.json only with --expected-lines N (greedy only).

The weights are not Transformers' initialisation (std 0.02 gives nearly uniform logits, whose near-ties
make greedy and beam comparisons flaky) but drawn so that the top-1 logit margin is usually far above
float error and outputs are varied and end with </s> (see spread_weights).

Deterministic for a given --seed and library versions: SentencePiece trains with one thread on a fixed
slice of the data, torch draws from torch.manual_seed(seed) and runs with one thread. The default seed, 3,
is the one among 1-5 whose tiny model has the largest smallest greedy margin (0.03) with every expected
line ending with </s>. Needs torch, transformers, sentencepiece, safetensors and numpy
(scripts/check-marian.sh makes a venv with them).
"""
import argparse
import copy
import gzip
import io
import json
import math
import os
import re
import sys

import sentencepiece as spm
import torch
import transformers
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import MarianConfig, MarianMTModel, MarianTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, 'data', 'multi30k')

# Per shape: model sizes, SentencePiece sizes and training lines, vocabulary size (None: as many ids as
# pieces), source pieces left out of vocab.json, lines of expected.json and of them with logits, whether
# it has beam search, the gain of the attention query and key weights (see spread_weights).
SHAPES = {
    'tiny': dict(d_model=32, layers=2, heads=4, ffn=64, positions=128,
                 spm_source=250, spm_target=280, spm_lines=3000, vocab_size=None, removed=5,
                 expected_lines=24, logits_lines=2, beam=True, qk_gain=5.0),
    'opus-mt-en-de': dict(d_model=512, layers=6, heads=8, ffn=2048, positions=512,
                          spm_source=8000, spm_target=8000, spm_lines=29000, vocab_size=58101, removed=0,
                          expected_lines=0, logits_lines=0, beam=False, qk_gain=2.0),
}

# Generation settings of expected.json (scripts/check-marian.sh uses the same): one line per call, no
# sampling, no length penalty, no forced </s> at the limit (a line at the limit just stops), <pad> banned
# through bad_words_ids (added per model: [[pad_id]]), log-probabilities not renormalised after the ban.
MAX_NEW_TOKENS = 40
COMMON = dict(do_sample=False, max_new_tokens=MAX_NEW_TOKENS, forced_eos_token_id=None,
              no_repeat_ngram_size=0, repetition_penalty=1.0, min_length=0, renormalize_logits=False)
GREEDY = dict(num_beams=1)
BEAM4 = dict(num_beams=4, length_penalty=0.0, early_stopping=True)

# Median greedy length (tokens before </s>) that the </s> bias is calibrated to, on CALIBRATION_LINES
# lines of val.en (not among the expected lines).
TARGET_LENGTH = 10
CALIBRATION_LINES = 16


def read_lines(name, n):
    """The first n lines of data/multi30k/NAME (gzip)."""
    lines = []
    with gzip.open(os.path.join(DATA, name), 'rt', encoding='utf-8') as f:
        for line in f:
            if len(lines) == n:
                break
            lines.append(line.rstrip('\n'))
    return lines


def train_spm(lines, vocab_size, seed, normalization):
    """A unigram SentencePiece model (serialized), trained deterministically: one thread, all the given
    lines in their order (no sampling, no shuffling). SentencePiece's defaults otherwise, as OPUS-MT's
    models: <unk> 0, <s> 1, </s> 2, character coverage 0.9995 (so some characters of the text are unknown
    to the model). The source model has the default normalisation, nmt_nfkc, as OPUS-MT's (its rule table
    makes the file 240 KB); the target model, whose normaliser translation never uses (it only decodes
    pieces to text), has none ("identity", a 6 KB file). A vocab_size larger than the text allows
    becomes the largest it allows."""
    spm.set_random_generator_seed(seed)
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=model, model_type='unigram', vocab_size=vocab_size,
            normalization_rule_name=normalization, num_threads=1, input_sentence_size=0,
            shuffle_input_sentence=False, minloglevel=2)
    except RuntimeError as e:
        # "Vocabulary size too high (8000). Please set it to a value <= 7823.": as many as the text allows.
        most = re.search(r'Vocabulary size too high .* <= (\d+)', str(e))
        if not most:
            raise
        return train_spm(lines, int(most.group(1)), seed, normalization)
    return model.getvalue()


def spm_pieces(proto):
    """(piece, score) of the ordinary pieces of a SentencePiece model, without <unk>, <s>, </s>."""
    sp = spm.SentencePieceProcessor(model_proto=proto)
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())
            if not (sp.is_unknown(i) or sp.is_control(i))]


def choose_removed(source_proto, target_pieces, lines, count):
    """`count` ordinary source-only pieces (not in the target model, two characters or more besides the
    "▁") that the source model uses on `lines`, least used first, then by piece: left out of vocab.json,
    so that MarianTokenizer maps them to <unk>."""
    if count == 0:
        return []
    sp = spm.SentencePieceProcessor(model_proto=source_proto)
    uses = {}
    for line in lines:
        for piece in sp.encode(line, out_type=str):
            uses[piece] = uses.get(piece, 0) + 1
    candidates = sorted((n, p) for p, n in uses.items()
                        if p not in target_pieces and len(p.lstrip('\u2581')) >= 2)
    if len(candidates) < count:
        sys.exit(f'make-marian-fixture: only {len(candidates)} source-only pieces to leave out')
    return sorted(p for _, p in candidates[:count])


def build_vocab(source_proto, target_proto, removed, size):
    """vocab.json as OPUS-MT's: </s> 0, <unk> 1, then the union of both models' ordinary pieces, most
    probable first (the higher of the two unigram log-probabilities; ties by piece), <pad> last. With a
    `size`, dummy pieces fill the vocabulary up to exactly `size` ids (<pad> = size - 1)."""
    best = {}
    for piece, score in spm_pieces(source_proto) + spm_pieces(target_proto):
        if piece not in removed:
            best[piece] = max(score, best.get(piece, -math.inf))
    vocab = {'</s>': 0, '<unk>': 1}
    for piece in sorted(best, key=lambda p: (-best[p], p)):
        vocab[piece] = len(vocab)
    if size is not None:
        if len(vocab) + 1 > size:
            sys.exit(f'make-marian-fixture: {len(vocab) + 1} pieces do not fit in {size} ids')
        n = 0
        while len(vocab) < size - 1:
            vocab[f'\u2581dummy{n}'] = len(vocab)
            n += 1
    vocab['<pad>'] = len(vocab)
    return vocab


def marian_config(shape, vocab_size):
    """config.json as the hub's OPUS-MT models have it (Helsinki-NLP/opus-mt-en-de's keys and values, with
    the sizes of `shape`), including keys that today's Transformers no longer reads."""
    s = SHAPES[shape]
    pad = vocab_size - 1
    return {
        '_name_or_path': f'tt-fixture/marian-{shape}',
        'activation_dropout': 0.0,
        'activation_function': 'swish',
        'add_bias_logits': False,
        'add_final_layer_norm': False,
        'architectures': ['MarianMTModel'],
        'attention_dropout': 0.0,
        'bad_words_ids': [[pad]],
        'bos_token_id': 0,
        'classif_dropout': 0.0,
        'classifier_dropout': 0.0,
        'd_model': s['d_model'],
        'decoder_attention_heads': s['heads'],
        'decoder_ffn_dim': s['ffn'],
        'decoder_layerdrop': 0.0,
        'decoder_layers': s['layers'],
        'decoder_start_token_id': pad,
        'decoder_vocab_size': vocab_size,
        'dropout': 0.1,
        'encoder_attention_heads': s['heads'],
        'encoder_ffn_dim': s['ffn'],
        'encoder_layerdrop': 0.0,
        'encoder_layers': s['layers'],
        'eos_token_id': 0,
        'forced_eos_token_id': 0,
        'init_std': 0.02,
        'is_encoder_decoder': True,
        'max_length': s['positions'],
        'max_position_embeddings': s['positions'],
        'model_type': 'marian',
        'normalize_before': False,
        'normalize_embedding': False,
        'num_beams': 4,
        'num_hidden_layers': s['layers'],
        'pad_token_id': pad,
        'scale_embedding': True,
        'share_encoder_decoder_embeddings': True,
        'static_position_embeddings': True,
        'torch_dtype': 'float32',
        'transformers_version': transformers.__version__,
        'use_cache': True,
        'vocab_size': vocab_size,
    }


def generation_config(config_json):
    """generation_config.json as the hub's OPUS-MT models have it."""
    keys = ('bad_words_ids', 'bos_token_id', 'decoder_start_token_id', 'eos_token_id', 'forced_eos_token_id',
            'max_length', 'num_beams', 'pad_token_id', 'transformers_version')
    return {k: config_json[k] for k in keys}


def length_channels(d_model):
    """Two coordinates of the model width that carry the decoder position to the </s> logit (see
    spread_weights): the sine of period 2*pi*15 (rises over the first ~24 positions) and the last cosine
    (of the lowest frequency, about 1 at every position). Marian's table puts the sines in the first half
    of the width and the cosines in the second, frequency 1 / 10000^(2i / d_model) at coordinate i."""
    return round(d_model / 2 * math.log(15) / math.log(10000)), d_model - 1


@torch.no_grad()
def spread_weights(model, qk_gain):
    """Draws weights that make a random model a useful test: sharp attention, varied and decisive outputs,
    and a </s> that becomes likely after some tokens, as a trained model's.

    - shared embedding (= lm_head, tied) N(0, 1.4 / sqrt(d_model)), the <pad> row zero;
    - attention query and key projections N(0, qk_gain / sqrt(fan_in)) (peaked, position-dependent
      attention: logits of std qk_gain^2; 5 for tiny; at 6+6 layers that makes the model chaotic, float32
      and float64 log-probabilities differing by 0.1, so 2 there), other linear weights
      N(0, 1 / sqrt(fan_in)), linear biases N(0, 0.1);
    - layer norms N(1, 0.2) weights, N(0, 0.05) biases; the decoder's last layer norm N(-4, 4) weights
      (large logits, and a negative mean that keeps a token from simply repeating itself: with tied
      embeddings the input token's own embedding would otherwise favour it again);
    - a length signal: the decoder's sublayers never write the two length_channels (their weights and
      biases there are zero, the token embeddings are zero there), so the decoder output carries
      sin(t / 15) - 1 of its position t, scaled by the layer norms (weights set by unit_length_channels);
      the </s> embedding row reads it with weights +24 / -24, so its logit rises by ~20 over the first 20
      positions;
    - final_logits_bias N(0, 0.5), <pad> 0 (as converted OPUS-MT models); the </s> entry is set later by
      calibrate_eos.
    The sinusoidal position tables are not parameters that change (Transformers computes them)."""
    d = model.config.d_model
    pad = model.config.pad_token_id
    eos = model.config.eos_token_id
    for name, p in model.named_parameters():
        if 'embed_positions' in name:
            continue
        if name.endswith('shared.weight'):
            p.normal_(0.0, 1.4 / math.sqrt(d))
            p[pad].zero_()
        elif 'layer_norm' in name:
            p.normal_(1.0, 0.2) if name.endswith('.weight') else p.normal_(0.0, 0.05)
        elif name.endswith('.weight'):
            gain = qk_gain if name.endswith(('q_proj.weight', 'k_proj.weight')) else 1.0
            p.normal_(0.0, gain / math.sqrt(p.shape[1]))
        elif name.endswith('.bias'):
            p.normal_(0.0, 0.1)
        else:
            raise RuntimeError(f'make-marian-fixture: unexpected parameter {name}')
    layers = model.model.decoder.layers
    layers[-1].final_layer_norm.weight.normal_(-4.0, 4.0)
    shared = model.model.shared.weight
    for channel, sign in zip(length_channels(d), (1.0, -1.0)):
        shared[:, channel] = 0.0
        shared[eos, channel] = 24.0 * sign
        for layer in layers:
            for linear in (layer.self_attn.out_proj, layer.encoder_attn.out_proj, layer.fc2):
                linear.weight[channel] = 0.0
                linear.bias[channel] = 0.0
            for norm in (layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm):
                norm.bias[channel] = 0.0
    bias = model.final_logits_bias
    bias.normal_(0.0, 0.5)
    bias[0, pad] = 0.0


@torch.no_grad()
def unit_length_channels(model, tok, lines):
    """Sets the decoder layer norms' weights on the length_channels to the mean standard deviation of their
    input on `lines` (with arbitrary target ids), so that each passes the length signal on at about the
    scale it got it, however many layers there are; the last layer norm, which feeds the logits, scales it
    by 0.5 instead."""
    norms = [norm for layer in model.model.decoder.layers
             for norm in (layer.self_attn_layer_norm, layer.encoder_attn_layer_norm, layer.final_layer_norm)]
    sums = [0.0] * len(norms)
    hooks = [norm.register_forward_pre_hook(lambda _, inputs, k=k: sums.__setitem__(
        k, sums[k] + inputs[0].std(-1).mean().item())) for k, norm in enumerate(norms)]
    start = model.config.decoder_start_token_id
    for line in lines:
        model(**tok(line, return_tensors='pt'), decoder_input_ids=torch.tensor([[start] + list(range(2, 22))]))
    for hook in hooks:
        hook.remove()
    for k, norm in enumerate(norms):
        for channel in length_channels(model.config.d_model):
            norm.weight[channel] = 0.5 if k == len(norms) - 1 else sums[k] / len(lines)


@torch.no_grad()
def calibrate_eos(model, tok, lines):
    """Sets final_logits_bias[</s>] (by bisection, to 1/64) so that the median greedy length on `lines`
    is TARGET_LENGTH or just below: the lengths then depend on the seed's weights much less."""
    eos, pad = model.config.eos_token_id, model.config.pad_token_id
    encodings = [tok(line, return_tensors='pt') for line in lines]

    def median_length(boost):
        model.final_logits_bias[0, eos] = boost
        start = model.config.decoder_start_token_id
        lengths = sorted(len(split_output(model.generate(**enc, **COMMON, **GREEDY, bad_words_ids=[[pad]])[0]
                                          .tolist(), start, eos)[0]) for enc in encodings)
        return lengths[len(lengths) // 2]

    low, high = -20.0, 108.0
    while high - low > 1 / 64:
        mid = (low + high) / 2
        if median_length(mid) > TARGET_LENGTH:
            low = mid
        else:
            high = mid
    model.final_logits_bias[0, eos] = high
    return high


def edge_lines(source_proto, removed):
    """Edge cases after the test lines: characters the source model never saw, one word, a long line (40
    words), and a short training line in which the source model uses a piece left out of vocab.json."""
    lines = ['Zürich ☃ is cold.', 'Dogs',
             'A man in a blue shirt and a woman in a red dress walk down a busy street with their two small '
             'dogs while three children play soccer in the green park behind them near the old stone church.']
    if removed:
        sp = spm.SentencePieceProcessor(model_proto=source_proto)
        for line in read_lines('train.en.gz', 3000):
            if len(line.split()) <= 10 and removed[0] in sp.encode(line, out_type=str):
                lines.append(line)
                break
        else:
            sys.exit(f'make-marian-fixture: no short training line uses {removed[0]}')
    return lines


def split_output(ids, start, eos):
    """Generated ids -> (ids without the leading decoder start and the final </s>, whether </s> ended it)."""
    assert ids[0] == start, ids
    ids = ids[1:]
    if ids and ids[-1] == eos:
        return ids[:-1], True
    return ids, False


@torch.no_grad()
def make_expected(model, tok, lines, removed, logits_lines, beam):
    """Transformers' results for `lines`, each translated on its own (batch 1: no padding). Also checks
    that the greedy output is the arg-max of the teacher-forced logits at every step, and records the
    smallest top-1 margin (largest logit minus the second, <pad> excluded) over those steps."""
    cfg = model.config
    pad, eos, start = cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id
    searches = [('greedy', GREEDY)] + ([('beam4', BEAM4)] if beam else [])
    out = {
        'transformers_version': transformers.__version__,
        'torch_version': torch.__version__,
        'sentencepiece_version': spm.__version__,
        'pad_id': pad, 'eos_id': eos, 'unk_id': tok.unk_token_id, 'decoder_start_id': start,
        'vocab_size': cfg.vocab_size,
        'removed_pieces': removed,
        'settings': {
            **{name: dict(COMMON, **kw, bad_words_ids=[[pad]]) for name, kw in searches},
            'batch_size': 1,
            'source_ids': 'tokenizer(source).input_ids: the source SentencePiece pieces mapped through '
                          'vocab.json (a piece not in it, or unknown to the SentencePiece model, is '
                          '<unk>), then </s>; source_pieces: source_ids as vocab.json pieces',
            'outputs': 'model.generate ids without the leading decoder start token and without a final '
                       '</s>; *_eos: whether </s> ended the output (otherwise it stopped at '
                       'max_new_tokens); *_text: tokenizer.decode(output, skip_special_tokens=True)',
            'greedy_min_margin': 'smallest (top-1 minus top-2) logit over the greedy steps, <pad> excluded',
            'float64_differs': 'per search, the lines whose output changes when the model runs in float64',
            'beam4_differs_without_early_stopping': 'the lines whose beam-4 output changes with '
                                                    'early_stopping=False (the search goes on after 4 '
                                                    'hypotheses have finished, as CTranslate2\'s does)',
            'logits': 'model(input_ids, decoder_input_ids=[decoder_start] + greedy).logits[0]: '
                      'lm_head + final_logits_bias over every id (<pad> included), one row per decoder '
                      'position (the last row follows the last greedy token), 7 significant digits',
        },
        'lines': [],
    }
    margins = []
    for i, line in enumerate(lines):
        enc = tok(line, return_tensors='pt')
        src = enc['input_ids'][0].tolist()
        entry = {'source': line, 'source_ids': src, 'source_pieces': tok.convert_ids_to_tokens(src)}
        for name, kw in searches:
            generated = model.generate(**enc, **COMMON, **kw, bad_words_ids=[[pad]])[0].tolist()
            ids, ended = split_output(generated, start, eos)
            entry[name] = ids
            entry[name + '_eos'] = ended
            entry[name + '_text'] = tok.decode(generated, skip_special_tokens=True)
        logits = model(**enc, decoder_input_ids=torch.tensor([[start] + entry['greedy']])).logits[0]
        allowed = logits.clone()
        allowed[:, pad] = -math.inf
        steps = allowed if entry['greedy_eos'] else allowed[:-1]
        chosen = steps.argmax(-1).tolist()
        assert chosen == entry['greedy'] + ([eos] if entry['greedy_eos'] else []), (line, chosen)
        top2 = steps.topk(2, dim=-1).values
        margin = (top2[:, 0] - top2[:, 1]).min().item()
        margins.append(margin)
        entry['greedy_min_margin'] = float(f'{margin:.4g}')
        if i < logits_lines:
            entry['logits'] = [[float(f'{v:.7g}') for v in row] for row in logits.tolist()]
        out['lines'].append(entry)
    out['greedy_min_margin'] = float(f'{min(margins):.4g}')

    # The same searches in float64: a line whose output changes is decided by a near-tie at float32
    # precision, and another engine may well differ there without a bug.
    model64 = copy.deepcopy(model).double()
    out['float64_differs'] = {}
    for name, kw in searches:
        out['float64_differs'][name] = [
            i for i, line in enumerate(lines)
            if model64.generate(**tok(line, return_tensors='pt'), **COMMON, **kw, bad_words_ids=[[pad]])[0].tolist()
            != [start] + out['lines'][i][name] + ([eos] if out['lines'][i][name + '_eos'] else [])]

    # Beam search that does not stop once `beam` hypotheses have finished (early_stopping=False, which is
    # what CTranslate2's search gives): the lines where it finds another output.
    if beam:
        out['beam4_differs_without_early_stopping'] = [
            i for i, line in enumerate(lines)
            if model.generate(**tok(line, return_tensors='pt'), **COMMON, **dict(BEAM4, early_stopping=False),
                              bad_words_ids=[[pad]])[0].tolist()
            != [start] + out['lines'][i]['beam4'] + ([eos] if out['lines'][i]['beam4_eos'] else [])]
    return out


def write_expected(path, expected):
    """JSON, one line per logits row and per entry field, so that the file diffs and greps well."""
    with open(path, 'w', encoding='utf-8') as f:
        f.write('{\n')
        for key, value in expected.items():
            if key == 'lines':
                continue
            f.write(f' {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},\n')
        f.write(' "lines": [\n')
        for n, entry in enumerate(expected['lines']):
            fields = []
            for key, value in entry.items():
                if key == 'logits':
                    rows = ',\n   '.join(json.dumps(row, separators=(',', ':')) for row in value)
                    fields.append(f'  "logits": [\n   {rows}]')
                else:
                    fields.append(f'  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}')
            f.write(' {\n' + ',\n'.join(fields) + '\n }' + (',' if n + 1 < len(expected['lines']) else '') + '\n')
        f.write(' ]\n}\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out_dir')
    ap.add_argument('--shape', choices=sorted(SHAPES), default='tiny')
    ap.add_argument('--seed', type=int, default=3)
    ap.add_argument('--expected-lines', type=int, default=None,
                    help='lines in expected.json (default: 24 for tiny, none for opus-mt-en-de)')
    ap.add_argument('--all-tensors', action='store_true',
                    help='model.safetensors with every tensor of the state dict, as older Transformers '
                         'wrote it: the sinusoidal position tables and each tied embedding name '
                         '(model.shared, encoder/decoder embed_tokens, lm_head) as a copy of its own')
    args = ap.parse_args()
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    s = SHAPES[args.shape]
    out = args.out_dir
    os.makedirs(out, exist_ok=True)
    log = lambda msg: print(f'make-marian-fixture: {msg}', file=sys.stderr)  # noqa: E731

    # SentencePiece models: English source, German target.
    source_proto = train_spm(read_lines('train.en.gz', s['spm_lines']), s['spm_source'], args.seed, 'nmt_nfkc')
    target_proto = train_spm(read_lines('train.de.gz', s['spm_lines']), s['spm_target'], args.seed, 'identity')
    for name, proto in (('source.spm', source_proto), ('target.spm', target_proto)):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(proto)

    test = read_lines('test2016.en.gz', 20)
    removed = choose_removed(source_proto, {p for p, _ in spm_pieces(target_proto)}, test, s['removed'])
    vocab = build_vocab(source_proto, target_proto, set(removed), s['vocab_size'])
    with open(os.path.join(out, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump(vocab, f, ensure_ascii=False, indent=2)
        f.write('\n')
    tok = MarianTokenizer(os.path.join(out, 'source.spm'), os.path.join(out, 'target.spm'),
                          os.path.join(out, 'vocab.json'), source_lang='en', target_lang='de')

    # The model: Transformers' initialisation from the seed, then spread_weights, the length signal's
    # scale and the </s> bias.
    config_json = marian_config(args.shape, len(vocab))
    torch.manual_seed(args.seed)
    model = MarianMTModel(MarianConfig(**config_json)).eval()
    spread_weights(model, s['qk_gain'])
    calibration = read_lines('val.en.gz', CALIBRATION_LINES)
    unit_length_channels(model, tok, calibration)
    boost = calibrate_eos(model, tok, calibration)
    log(f'</s> bias {boost:.4f} (median greedy length {TARGET_LENGTH} on {CALIBRATION_LINES} lines of val.en)')

    model.save_pretrained(out, safe_serialization=True)
    os.chmod(os.path.join(out, 'model.safetensors'), 0o644)  # written 0600
    if args.all_tensors:
        save_file({k: v.detach().clone().contiguous() for k, v in model.state_dict().items()},
                  os.path.join(out, 'model.safetensors'), metadata={'format': 'pt'})
    tok.save_pretrained(out)
    # config.json and generation_config.json as the hub has them (save_pretrained writes today's layout,
    # without the keys that older Transformers wrote and that converted OPUS-MT models carry).
    for name, value in (('config.json', config_json), ('generation_config.json', generation_config(config_json))):
        with open(os.path.join(out, name), 'w', encoding='utf-8') as f:
            json.dump(value, f, indent=2, sort_keys=True)
            f.write('\n')

    # Reload what was written, as a user would, and check that it is the same model.
    model2 = MarianMTModel.from_pretrained(out).eval()
    tok2 = MarianTokenizer.from_pretrained(out)
    state, state2 = model.state_dict(), model2.state_dict()
    assert state.keys() == state2.keys()
    for name in state:
        assert torch.equal(state[name], state2[name]), name
    with safe_open(os.path.join(out, 'model.safetensors'), 'pt') as f:
        names = sorted(f.keys())
    log(f'{out}: vocabulary {len(vocab)}, {sum(p.numel() for p in model.parameters())} parameters, '
        f'{len(names)} tensors in model.safetensors')

    n = s['expected_lines'] if args.expected_lines is None else args.expected_lines
    if n:
        lines = (test + edge_lines(source_proto, removed))[:n]
        expected = make_expected(model2, tok2, lines, removed, s['logits_lines'], s['beam'])
        write_expected(os.path.join(out, 'expected.json'), expected)
        for name in ('greedy', 'beam4') if s['beam'] else ('greedy',):
            lengths = [len(e[name]) for e in expected['lines']]
            log(f'expected.json, {name}: {sum(e[name + "_eos"] for e in expected["lines"])} of {len(lines)} '
                f'lines end with </s>, lengths {min(lengths)}..{max(lengths)} (median '
                f'{sorted(lengths)[len(lengths) // 2]})')
        log(f'expected.json: smallest top-1 margin of a greedy step {expected["greedy_min_margin"]}; lines '
            f'whose output changes in float64: {expected["float64_differs"]}, in beam search without early '
            f'stopping: {expected.get("beam4_differs_without_early_stopping", "-")}')


if __name__ == '__main__':
    main()
