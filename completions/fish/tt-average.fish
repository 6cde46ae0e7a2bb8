# fish completion for tt-average, written by tt-average from its flag definitions: do not edit, run scripts/update-completions.sh
complete -c tt-average -f
complete -c tt-average -l help -s h -d 'Print this help message and exit'
complete -c tt-average -l version -d 'Print the version and exit'
complete -c tt-average -l output -s o -r -F -d 'Write the averaged model directory here'
complete -c tt-average -l last -x -d 'Average the N latest checkpoints of the run'
complete -c tt-average -l best -x -d 'Average the N checkpoints with the best validation BLEU'
complete -c tt-average -l log -r -F -d 'Validation log for --best'
complete -c tt-average -l force -d 'Replace OUT if it exists'
complete -c tt-average -l quiet -s q -d 'Print nothing on stderr but errors'
complete -c tt-average -a '(__fish_complete_directories)'
