# fish completion for tt-convert
set -l commands quantize export-ct2 import-marian
complete -c tt-convert -f
complete -c tt-convert -n "not __fish_seen_subcommand_from $commands" -a quantize -d 'Store the weights as int8 or bf16'
complete -c tt-convert -n "not __fish_seen_subcommand_from $commands" -a export-ct2 -d 'Write a CTranslate2 model directory'
complete -c tt-convert -n "not __fish_seen_subcommand_from $commands" -a import-marian -d 'Write a tt model directory from a MarianMTModel directory'
complete -c tt-convert -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version and exit'
complete -c tt-convert -s h -l help -d 'Print help and exit'
complete -c tt-convert -s q -l quiet -d 'Print nothing on stderr but errors'

# quantize, export-ct2, import-marian
complete -c tt-convert -n "__fish_seen_subcommand_from $commands" -a '(__fish_complete_directories)' -d 'Model directory (import-marian: MarianMTModel directory)'
complete -c tt-convert -n "__fish_seen_subcommand_from $commands" -s o -l output -x -a '(__fish_complete_directories)' -d 'Output directory'
complete -c tt-convert -n "__fish_seen_subcommand_from $commands" -l force -d 'Replace an existing output of the same kind'
complete -c tt-convert -n "__fish_seen_subcommand_from quantize" -l type -x -a 'int8 bf16' -d 'Stored type'
