# fish completion for tt-tokenize
set -l commands train encode decode vocab
complete -c tt-tokenize -f
complete -c tt-tokenize -n "not __fish_seen_subcommand_from $commands" -a train -d 'Train a model: PREFIX.model and PREFIX.vocab'
complete -c tt-tokenize -n "not __fish_seen_subcommand_from $commands" -a encode -d 'Encode text from stdin into subwords'
complete -c tt-tokenize -n "not __fish_seen_subcommand_from $commands" -a decode -d 'Decode subwords from stdin into text'
complete -c tt-tokenize -n "not __fish_seen_subcommand_from $commands" -a vocab -d 'List the vocabulary: id, piece, score'
complete -c tt-tokenize -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version and exit'
complete -c tt-tokenize -s h -l help -d 'Print help and exit'

# train
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -s i -l input -r -F -d 'Training text files'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -s o -l model-prefix -r -F -d 'Output prefix'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l vocab-size -x -d 'Vocabulary size'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l model-type -x -a 'unigram bpe char word' -d 'Model type'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l character-coverage -x -d 'Character coverage'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l input-sentence-size -x -d 'Sample this many sentences'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l user-defined-symbols -x -d 'Symbols kept as one piece'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l byte-fallback -d 'Spell unknown characters as bytes'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l max-sentence-length -x -d 'Skip longer lines (bytes)'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l normalization -x -a 'nmt_nfkc nfkc nmt_nfkc_cf nfkc_cf identity' -d 'Normalisation rule'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l threads -x -d 'Training threads'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -l seed -x -d 'Seed for sampling'
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -s v -l verbose -d "Show SentencePiece's log"
complete -c tt-tokenize -n "__fish_seen_subcommand_from train" -s q -l quiet -d 'Print nothing on success'

# encode, decode, vocab
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode decode vocab" -s m -l model -r -F -d 'SentencePiece model'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode decode" -l format -x -a 'piece id' -d 'Subword format'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode decode" -l threads -x -d 'Worker threads'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode decode" -l extra-options -x -a 'bos eos bos:eos reverse' -d 'SentencePiece extra options'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode" -l nbest -x -d 'Write the N best segmentations'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode" -l alpha -x -d 'Sample segmentations (smoothing)'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode" -l nbest-size -x -d 'Sample from the N best'
complete -c tt-tokenize -n "__fish_seen_subcommand_from encode" -l seed -x -d 'Seed for sampling'
