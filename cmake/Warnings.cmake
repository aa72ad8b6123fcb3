# Warnings are on for every target of ours and kept clean.
add_compile_options(-Wall -Wextra -Wpedantic -Wno-missing-field-initializers)
