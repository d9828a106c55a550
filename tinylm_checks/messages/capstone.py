"""Stage 13: the learner's repository, tiny-transformer/."""

MISTAKES = {
    "tests_miss_no_scale": (
        "the tests do not compare the attention's values with a result you trust: without the 1/sqrt(d_k) scale "
        "every shape and every row's sum stay right",
        "compare the output with torch.nn.functional.scaled_dot_product_attention on random q, k, v"),
    "tests_miss_softmax_over_queries": (
        "the tests check neither the values nor that each query's weights sum to 1 over the keys: a softmax over the "
        "queries keeps every shape, whatever the numbers of queries and keys",
        "check that the weights sum to 1 over the last dimension, or compare the output's values with PyTorch's "
        "attention"),
    "tests_miss_mask_sees_next": (
        "the tests do not compare causal_mask(T) with the lower triangle: tril(diagonal=1) differs from it only just "
        "above the diagonal",
        "compare causal_mask(T) with torch.ones(T, T, dtype=torch.bool).tril()"),
    "tests_miss_mask_not_passed": (
        "the tests check the mask function, not the model: a TinyLM that never passes its mask to the blocks has a "
        "right causal_mask and still reads the future",
        "change the tokens after a position t and check that the model's logits at 0..t stay the same"),
    "tests_miss_no_gradient": (
        "the overfit test does not assert that the loss ends far below ln V: a model that learns nothing keeps its "
        "loss near ln V",
        "train a small TinyLM on one fixed batch for a hundred steps and assert a final loss below a tenth of ln V"),
    "tests_miss_mask_hides_self": (
        "the overfit test accepts a NaN: a mask that also hides each position itself leaves the first position "
        "nothing to attend to, and its output is NaN",
        "assert that the final loss is below a small bound (a NaN fails every comparison)"),
    "tests_miss_ignores_input": (
        "the overfit test asserts that the loss fell, not that it ended near 0: a model whose logits are the same at "
        "every position still lowers its loss (to the frequencies of the batch's characters) but cannot memorise the "
        "batch",
        "overfitting one batch means a final loss close to 0: compare it with ln V (where training starts) rather "
        "than with the first loss; the lesson's overfit exercise says how far below ln V it should end"),
    "tests_miss_blocks_no_gradient": (
        "the overfit test asserts that the loss fell, not that it ended near 0: a model whose blocks get no gradient "
        "still lowers its loss (its embedding and head learn) but cannot memorise the batch",
        "assert that the final loss is a small fraction of ln V (below a tenth of it), not only below the first loss"),
    "head_not_tied": (
        "the head is not tied to the embedding: lm_head.weight holds a copy of token_emb.weight's values (copy_, "
        "clone, or the same init), so the two are separate parameters that train apart, and the model has V x D "
        "parameters more than the course's",
        "weight tying makes both modules hold the very same nn.Parameter object; see how notebook 08's TinyLM.__init__ "
        "ties its head, and compare model.lm_head.weight is model.token_emb.weight"),
    "model_no_gpt2_init": (
        "TinyLM starts from PyTorch's default initialisation, not GPT-2's: nn.Embedding draws N(0, 1), fifty times "
        "the 0.02 the course's training settings (its learning rates, its loss curves) assume, and nn.Linear a uniform "
        "of standard deviation 1/sqrt(3 * in_features), about 0.07 for 64 inputs",
        "notebook 08's TinyLM ends its __init__ by setting every matrix's initial values, with the residual "
        "projections (W_O, linear2) scaled down by the depth: bring that part into model.py"),
    "temperature_no_effect": (
        "the temperature changes nothing: a run at a temperature near 0 samples exactly what a run at 1.0 with the same "
        "seed samples. Dividing the probabilities after the softmax is undone when torch.multinomial normalises them "
        "again; the temperature reshapes the distribution only where it acts on the logits",
        "in your generate, follow the logits of the last position up to the draw: at which step does the temperature "
        "act, and does it still matter after the softmax? Notebook 10 shows a low temperature sharpening the "
        "distribution"),
    "top_k_keeps_one_more": (
        "top-k keeps one character too many: each draw came from the k + 1 most likely, so the threshold is the "
        "(k + 1)-th largest logit, not the k-th (an index off by one: sorted positions count from 0)",
        "in your generate, print how many logits stay finite after the top-k step for k = 1 and k = 3, and compare "
        "with notebook 10's top-k cell"),
    "report_no_numbers": (
        "the answer tells what happened without what was measured: this question asks for a quantity, and a report "
        "puts the number next to the claim, so that a reader can check it (\"learned well\" cannot be checked)",
        "the report exercise's second hint says which notebook measured each quantity; copy the values your own runs "
        "printed there"),
    "pytest_no_pythonpath": (
        "plain pytest does not put the repository's folder on sys.path (python -m pytest does: it adds the folder it "
        "runs in), so tests/ cannot import model.py when someone types pytest",
        "tell pytest where model.py is: in pyproject.toml, [tool.pytest.ini_options] with pythonpath = [\".\"] (and "
        "testpaths = [\"tests\"])"),
    "repo_imports_course": (
        "the repository leans on the course: whoever clones it has only what pyproject.toml declares, and the course's "
        "packages are not among them",
        "read what the file takes from the course and put it in the repository: the corpus is data/train.txt "
        "(the notebook wrote it), and train.py reads --data, which defaults to it"),
    "checkpoint_not_ignored": (
        "git would commit the checkpoints: checkpoint.pt is not matched by .gitignore, and a binary file of hundreds "
        "of kilobytes that train.py makes again would sit in the history for good",
        "add a pattern that matches every checkpoint, *.pt, to .gitignore"),
}

MESSAGES = {
    "capstone.read": "the repository was read (repo())",
    "capstone.not_files": {
        "problem": "repo() did not give the repository's files",
        "expected": "a dict {{path: text}}, as Repository('tiny-transformer')() returns",
    },
    "capstone.unsafe_path": {
        "problem": "the repository names a file outside itself: {path}",
        "hint": "paths are relative to tiny-transformer/, without '..'",
    },
    "capstone.missing_file": {
        "problem": "the repository has no {name}",
        "got": "{have}",
        "hint": "run the cell that writes {name} (it starts with %%writefile tiny-transformer/{name})",
    },
    "capstone.unfinished": {
        "problem": "{name} is still the template: it raises NotImplementedError",
        "hint": "write your code in place of the two template lines of its cell, then run the cell again",
    },
    "capstone.file_too_large": {
        "problem": "{name} has {size} characters; the checks read files of at most {limit}",
        "hint": "keep each file of your repository to its code: data and outputs belong in files the commands write",
    },
    "capstone.syntax_error": {
        "problem": "{name} is not valid Python: line {line}: {error}",
    },
    "capstone.imports_course": {
        "problem": "{name} imports {module}: the repository's model and tests are your own code",
        "hint": "copy your classes and functions from the earlier notebooks into model.py instead of importing the "
                "course's, and let the tests import what they test from model",
    },
    "capstone.timed_out": {
        "problem": "{command} timed out after {seconds} s, the time each command of the check may take",
        "hint": "run the same command yourself in tiny-transformer/ and time it: a loop that waits for something, "
                "or that ends only when a model learns, may never end; on a very busy machine, run the check again",
    },
    "capstone.out_of_cpu": {
        "problem": "{command} was stopped at {seconds} s of CPU time, the most each command of the check may use",
        "hint": "run the same command yourself in tiny-transformer/ and time it: end every loop after a fixed number "
                "of steps, and keep models and step counts small (the reference's slowest command uses about 3 s)",
    },
    "capstone.probe_command": "the check's script that imports your model.py",
    "capstone.run_on_correct": "{command} on a correct model.py",
    "capstone.run_on_broken": "{command} on a model.py whose {broken}",
    "capstone.probe_died": {
        "problem": "the check's script that imports your model.py ended without a result (exit code {code})",
        "got": "{output}",
    },
    "capstone.part.import": "importing model.py",
    "capstone.part.mask": "causal_mask(T)",
    "capstone.part.attention": "scaled_dot_product_attention(q, k, v, mask)",
    "capstone.part.build": "TinyLM(**config) and load_state_dict",
    "capstone.part.forward": "TinyLM's forward (input_ids, labels=input_ids)",
    "capstone.part.fresh": "a TinyLM built with torch.manual_seed(0), as its __init__ leaves it",
    "capstone.model_raised": {
        "problem": "{part} raised {error}: {message}",
    },
    "capstone.parameter_names": {
        "problem": "TinyLM's parameters are not named as in the course, so the check cannot copy weights into it",
        "expected": "also: {lacking}",
        "got": "also: {extra}",
        "hint": "use the course's attribute names: token_emb, pos_emb, blocks (each with norm1, attn with W_Q, W_K, "
                "W_V, W_O, norm2, ffn with linear1, linear2), norm, lm_head tied to token_emb",
    },
    "capstone.mask_wrong": {
        "problem": "causal_mask({T}) is not the lower-triangular bool mask",
        "hint": "torch.ones(T, T, dtype=torch.bool).tril(): True where the key's position is at most the query's",
    },
    "capstone.attention_shape": {
        "problem": "scaled_dot_product_attention's {what} has the wrong shape",
    },
    "capstone.attention_values": {
        "problem": "scaled_dot_product_attention's {what} differs from the reference's by {err:.2e}",
        "hint": "compare with your stage 01 function: softmax(q k^T / sqrt(d_k)) over the keys, masked keys at -inf",
    },
    "capstone.logits_shape": {
        "problem": "TinyLM's logits have the wrong shape",
    },
    "capstone.logits_values": {
        "problem": "with the reference's weights copied in, TinyLM's logits differ by {err:.2e}",
        "hint": "compare each part with your notebooks 01-08: Pre-LN blocks, learned positions added to the token "
                "embeddings, the final LayerNorm, the head tied to the embedding, the causal mask passed to every block",
    },
    "capstone.loss_value": {
        "problem": "TinyLM's loss for labels=input_ids is not the next-token cross-entropy",
        "hint": "the logits at t against the labels at t + 1, ignore_index=-100 (notebook 08's causal_lm_loss)",
    },
    "capstone.head_not_tied": {
        "problem": "TinyLM's lm_head.weight and token_emb.weight are two parameters with equal values, not one",
        "expected": "model.lm_head.weight is model.token_emb.weight",
        "got": "two tensors",
    },
    "capstone.init_not_gpt2": {
        "problem": "a freshly built TinyLM ({config}) has {name} with standard deviation {std:.3f}: not GPT-2's "
                   "initialisation",
        "expected": "about 0.02 (0.01 for W_O and linear2 with 2 layers)",
        "got": "{std:.3f}",
    },
    "capstone.model_passed": "causal_mask, scaled_dot_product_attention and TinyLM (V = {V}, T = {T}, D = {D}, "
                             "{L} layers, the reference's weights copied in) give the reference's values; the "
                             "file imports none of the course's packages",
    # ---- the learner's tests
    "capstone.no_tests": {
        "problem": "pytest found no test in {test}",
        "hint": "a test is a function whose name starts with test_, with an assert",
    },
    "capstone.tests_fail_correct": {
        "problem": "{test} fails on a correct model.py: {status}",
        "hint": "what pytest printed there is not shown (that model.py is the reference's code in other words): it "
                "computes exactly what the reference computes, but is written "
                "differently (other local names and comments, the definitions in another order, equivalent "
                "expressions); run python -m pytest {test} in tiny-transformer/ on your own model.py "
                "(check_capstone_model compares it with the reference) and read the first failure; test what the code "
                "computes, through causal_mask, scaled_dot_product_attention, TinyLM and the course's attribute "
                "names, with a tolerance (torch.allclose), never the file's text",
    },
    "capstone.status.1": "a test failed",
    "capstone.status.2": "pytest was interrupted, or could not import a test file",
    "capstone.status.3": "pytest hit an internal error",
    "capstone.status.4": "pytest could not read its command line",
    "capstone.status.other": "the run did not end as pytest ends (killed by a signal, or os._exit)",
    "capstone.tests_miss": {
        "problem": "{test} passes on a model.py whose {broken}",
    },
    "capstone.broken.no_scale": "attention does not divide the scores by sqrt(d_k)",
    "capstone.broken.softmax_over_queries": "attention takes the softmax over the queries (dim=-2)",
    "capstone.broken.mask_sees_next": "causal mask lets position t see token t + 1 (tril(diagonal=1))",
    "capstone.broken.mask_not_passed": "TinyLM does not pass the mask to its blocks",
    "capstone.broken.no_gradient": "loss carries no gradient to the weights",
    "capstone.broken.mask_hides_self": "causal mask also hides each position itself (tril(diagonal=-1))",
    "capstone.broken.ignores_input": "logits are the same at every position of every sequence (the loss falls a "
                                     "little, to the characters' frequencies, and no lower)",
    "capstone.broken.blocks_no_gradient": "blocks get no gradient (only the embedding and the head learn: the loss "
                                          "falls a little)",
    "capstone.tests_passed": "{test} passes on {n_correct} correct model.py files, each written differently from "
                             "the reference, and fails on the {n} broken ones ({broken})",
    # ---- train.py
    "capstone.config_not_yaml": {
        "problem": "configs/tiny.yaml is not valid YAML: {error}",
    },
    "capstone.config_section": {
        "problem": "configs/tiny.yaml has no section {section}:",
        "hint": "two sections, model: (max_seq_len, d_model, num_heads, num_layers, d_ff) and train: (steps, "
                "batch_size, lr, seed)",
    },
    "capstone.config_key": {
        "problem": "configs/tiny.yaml's {section}.{key} is {value}",
        "expected": "a positive number",
    },
    "capstone.config_heads": {
        "problem": "configs/tiny.yaml's d_model {d_model} is not divisible by num_heads {num_heads}",
    },
    "capstone.train_tried": "{command} with a small configuration of the check's",
    "capstone.train_failed": {
        "problem": "train.py ended with exit code {code}",
        "got": "{output}",
        "hint": "run the command above yourself in tiny-transformer/ with a small configuration and read its last lines",
    },
    "capstone.checkpoint_format": {
        "problem": "the checkpoint is not a dict with config, model and vocab",
        "hint": "torch.save({{'config': model_config, 'model': model.state_dict(), 'vocab': vocab}}, args.out)",
    },
    "capstone.checkpoint_config": {
        "problem": "the checkpoint's config is not the configuration train.py was given (with vocab_size = len(vocab))",
        "hint": "read --config with yaml.safe_load and build TinyLM(**config['model'], vocab_size=len(vocab)); save "
                "that dict",
    },
    "capstone.checkpoint_vocab": {
        "problem": "the checkpoint's vocab does not hold every character of the corpus",
        "hint": "vocab = sorted(set(text)), a list of characters",
    },
    "capstone.checkpoint_weights": {
        "problem": "the checkpoint's weights do not fit the course's TinyLM: {error}",
    },
    "capstone.steps_ignored": {
        "problem": "train.py was given --steps {steps} and took {taken} optimizer steps",
        "hint": "take one optimizer.step() per step of --steps: read --steps from the command line (when it is "
                "given, it replaces the config's train.steps; the check's configuration has steps: 0, so only --steps "
                "trains), and call optimizer.step() in every step of the loop (the check counts the step() calls of "
                "torch.optim optimizers)",
    },
    "capstone.not_trained": {
        "problem": "with --steps {steps}, the saved model's loss is {loss:.2f} on the corpus, not well below ln V = "
                   "{ln_v:.2f}",
        "hint": "train.py must take --steps optimiser steps on batches of the corpus (zero_grad, backward, step) and "
                "save the trained weights",
    },
    "capstone.train_cycle_tried": "{command}, on a text where each character follows from the one before",
    "capstone.data_option": {
        "problem": "train.py --data did not train on the given text and save a checkpoint (exit code {code})",
        "got": "{output}",
        "hint": "add --data (default None): when given, read that file's text instead of the course's corpus",
    },
    "capstone.data_ignored": {
        "problem": "with --data, the checkpoint's vocabulary has {n} characters, not the given text's",
        "hint": "build the vocabulary from the text you train on: read --data's file when it is given",
    },
    "capstone.cycle_not_learned": {
        "problem": "on a text where each character follows from the one before, training with --steps {steps} ends "
                   "at a next-token loss of {loss:.2f}, not near 0",
        "hint": "train on model(x, labels=x): the model pairs the logits at t with the label at t + 1 itself",
    },
    "capstone.train_passed": "configs/tiny.yaml has the course's keys; train.py, given --steps {steps}, trained a "
                             "small configuration and saved a checkpoint whose loss on the corpus is {loss:.2f} (ln V = "
                             "{ln_v:.2f}); with --data on a predictable text its next-token loss is {cycle:.3f}",
    # ---- generate.py
    "capstone.generate_failed": {
        "problem": "generate.py ended with exit code {code}",
        "got": "{output}",
        "hint": "run the command above yourself in tiny-transformer/ (with a checkpoint of yours) and read its last "
                "lines; a prompt and more new characters than max_seq_len need the context cropped to the last "
                "max_seq_len positions",
    },
    "capstone.greedy_differs": {
        "problem": "with --top-k 1 (greedy), generate.py prints another text than the reference's",
        "hint": "load the checkpoint (config, model, vocab), encode the prompt, then notebook 10's generate: crop to "
                "max_seq_len, the last position's logits, top-k, sample; print the prompt and its continuation",
    },
    "capstone.sample_length": {
        "problem": "the printed text is not the prompt followed by {n} new characters",
    },
    "capstone.sample_not_reproducible": {
        "problem": "two runs with the same --seed print different texts",
        "hint": "sample with a torch.Generator seeded from --seed",
    },
    "capstone.seed_ignored": {
        "problem": "two runs with different --seed values print the same text from a nearly uniform model",
        "hint": "pass a torch.Generator seeded from --seed to torch.multinomial",
    },
    "capstone.temperature_not_greedy": {
        "problem": "with --temperature {temperature} (near 0) sampling did not become greedy: generate.py printed "
                   "another text than the most likely character at each step",
    },
    "capstone.top_k_outside": {
        "problem": "with --top-k {k}, new character {position} ({char}) is outside the {k} most likely: it is the "
                   "model's choice number {rank}",
        "hint": "top-k draws only among the k largest logits: every other logit is set to -inf before the softmax",
    },
    "capstone.generate_passed": "greedy generation from a checkpoint of the check's equals the reference's ({n} "
                                "characters after '{prompt}', past max_seq_len); sampling is reproducible for a seed "
                                "and changes with it; a temperature near 0 makes it greedy, and --top-k {k} draws "
                                "only among the {k} most likely",
    # ---- report.md
    "capstone.question.1": "How are the parameters distributed?",
    "capstone.question.2": "Can the model overfit one small batch?",
    "capstone.question.3": "What happened in the ablations?",
    "capstone.question.4": "Does the theoretical complexity match tokens/s?",
    "capstone.question.5": "What was the first error met, and what was the evidence?",
    "capstone.report_unfinished": {
        "problem": "report.md is still the template: '{stub}' stands where an answer goes",
        "hint": "write your answer in place of each '{stub}' line, then run the cell again",
    },
    "capstone.report_question": {
        "problem": "report.md has no section '## {question}'",
        "hint": "keep the five headings of the template, in English or in Chinese (this one: '## {english}' or "
                "'## {chinese}'), and write your answer under each",
    },
    "capstone.report_short": {
        "problem": "the answer to '{question}' has {words} words",
        "expected": "at least {least}: the numbers of your runs and what they show",
    },
    "capstone.report_no_number": {
        "problem": "the answer to '{question}' has no number",
        "expected": "the numbers your runs measured, in digits",
    },
    "capstone.report_passed": "report.md answers the {n} questions, each in at least {least} words, with numbers in "
                              "the answers to questions {numbered}",
    "capstone.list_separator": ", ",  # between the numbers of a list of questions: "1, 2, 4"
    # ---- the repository as a whole
    "capstone.pyproject_invalid": {
        "problem": "pyproject.toml cannot be read as a toml file: {error}",
        "hint": "run the cell that writes pyproject.toml again, or compare your edit with it",
    },
    "capstone.pyproject_no_dependencies": {
        "problem": "pyproject.toml has no [project] table with a dependencies list",
        "expected": "[project] with dependencies = [\"torch>=2.5\", \"pyyaml>=6.0\"]",
    },
    "capstone.pyproject_lacks": {
        "problem": "pyproject.toml does not declare {lacking}, which the repository's code imports",
        "got": "the dependencies declare: {declared}",
        "hint": "each package the code imports goes into [project] dependencies, with a range (torch>=2.5)",
    },
    "capstone.repo_imports_course": {
        "problem": "{name} imports {module}: whoever clones the repository has no course to import",
    },
    "capstone.checkpoint_not_ignored": {
        "problem": ".gitignore does not ignore checkpoint.pt",
    },
    "capstone.readme_no_commands": {
        "problem": "README.md does not say how to run {lacking}",
        "hint": "a README tells a stranger how to install, test, train and generate: run the cell that writes it",
    },
    "capstone.readme_no_results": {
        "problem": "README.md has no measured loss",
        "hint": "README.md reports your own run: the final training and validation losses, in digits; run the cell "
                "that writes it after the training run",
    },
    "capstone.stranger_command": "python _check_stranger.py (a new venv with only the declared requirements, then "
                                 "pytest, train.py and generate.py in it)",
    "capstone.stranger_failed": {
        "problem": "the check could not set up a venv for the repository (exit code {code})",
        "got": "{output}",
    },
    "capstone.stranger_tried": "{command}, in the repository's folder, in a new venv that holds only what "
                               "pyproject.toml declares and what that requires ({installed})",
    "capstone.plain_pytest_no_model": {
        "problem": "plain pytest fails: the tests cannot import model",
        "got": "{output}",
    },
    "capstone.stranger_needs_course": {
        "problem": "{command} needs the course's packages",
        "got": "{output}",
    },
    "capstone.stranger_command_failed": {
        "problem": "{command} ended with exit code {code}",
        "got": "{output}",
        "hint": "run it yourself in tiny-transformer/ (the cell that writes README.md shows how) and read its last "
                "lines; a package it imports that pyproject.toml does not declare is missing here",
    },
    "capstone.repository_passed": "the repository runs as a stranger runs it: in a new venv holding only what "
                                  "pyproject.toml declares ({installed}), plain pytest passes, train.py --steps 2 "
                                  "saves a checkpoint from its default text and generate.py continues from it; "
                                  ".gitignore keeps checkpoints out of git and README.md says how to run it and what "
                                  "it measured",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "tests_miss_no_scale":
        "your tests/test_attention.py: what its assertions compare the output's values with",
    "tests_miss_softmax_over_queries":
        "your tests/test_attention.py: which properties of the weights and output it asserts",
    "tests_miss_mask_sees_next":
        "your tests/test_causal_mask.py: what it compares causal_mask(T) with, entry by entry",
    "tests_miss_mask_not_passed":
        "your tests/test_causal_mask.py: what its tests call, causal_mask only or a TinyLM too?",
    "tests_miss_no_gradient":
        "the final assertion of your tests/test_overfit_batch.py: which bound the loss must beat",
    "tests_miss_mask_hides_self":
        "the final-loss assertion in your tests/test_overfit_batch.py: what it does with a NaN",
    "tests_miss_ignores_input":
        "your tests/test_overfit_batch.py: what it compares the final loss with",
    "tests_miss_blocks_no_gradient":
        "the final-loss assertion of your tests/test_overfit_batch.py: its reference value",
    "head_not_tied":
        "TinyLM.__init__ in your model.py, after lm_head is created: what its weight refers to",
    "model_no_gpt2_init":
        "TinyLM.__init__ in your model.py: what happens to the layers once they are created",
    "temperature_no_effect":
        "the steps of your generate.py between the model's logits and torch.multinomial",
    "top_k_keeps_one_more":
        "the index that picks the top-k threshold in your generate.py",
    "report_no_numbers":
        "your report.md under this question: the claim that lacks its measured value",
    "pytest_no_pythonpath":
        "your pyproject.toml: what it tells pytest about the folder model.py is in",
    "repo_imports_course":
        "the import lines at the top of the file named above",
    "checkpoint_not_ignored":
        "your .gitignore: which pattern would match checkpoint.pt",
}
