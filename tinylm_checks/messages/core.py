"""What every check shares: the message's own words, calling learner code, what came back, comparisons."""

MISTAKES = {
    "view_after_transpose": (
        "calling .view() on a tensor that is not contiguous (sliced or transposed): .view() only relabels memory "
        "that is laid out in order",
        "use .reshape(...), which copies when it must (or .contiguous().view(...))"),
    "not_implemented": (
        "the exercise is not done yet (it still raises NotImplementedError)",
        "replace `raise NotImplementedError()` with your code, and run the exercise cell again"),
    "missing_projection": (
        "the output projection W_O is missing",
        "create self.W_O = nn.Linear(d_model, d_model) in __init__ and apply it to the merged heads"),
    "input_modified_in_place": (
        "an input tensor is modified in place",
        "don't use in-place operations (x /= ..., x.sub_(...), x[...] = ...) on the inputs; compute new tensors "
        "instead (x = x / ...)"),
    "no_gradient": (
        "the output is cut off from the autograd graph",
        "don't use torch.no_grad(), .detach(), .item(), .tolist() or numpy: training needs gradients through every "
        "operation"),
    "dtype_changed": (
        "the output's dtype differs from the inputs' dtype",
        "don't convert with .double()/.float() or create tensors with a fixed dtype; follow the inputs' dtype "
        "(x.dtype, torch.zeros_like)"),
    "missing_return": (
        "the function returns None: the `return` is missing",
        "end the function with `return ...`"),
    "numpy_output": (
        "the result is a numpy array, not a torch tensor",
        "stay in PyTorch: numpy cuts the autograd graph"),
    "attribute_name": (
        "a layer has another name than the one the exercise asks for",
        "the check copies weights by name: use exactly the attribute names of the exercise"),
    "linear_without_bias": (
        "a linear layer is created with bias=False",
        "nn.Linear has a bias unless you pass bias=False: leave bias out"),
    "linear_with_bias": (
        "a linear layer has a bias it should not have",
        "pass bias=False to this nn.Linear"),
    "missing_super_init": (
        "__init__ does not call super().__init__() before creating layers",
        "start __init__ with super().__init__()"),
    "batched_T": (
        "`.T` is used on a batched tensor; it reverses every dimension",
        "swap the last two dimensions with k.transpose(-2, -1); .T reverses all of them"),
    "bool_index_mask": (
        "the scores are masked by bool indexing (scores[~mask] = ...), which does not broadcast the mask",
        "indexing with a bool mask needs the mask's exact shape; scores.masked_fill(~mask, float('-inf')) "
        "broadcasts it and returns a new tensor"),
    "in_place_broadcast": (
        "an in-place operation (&=, +=, masked_fill_, ...) writes its result into a tensor smaller than the "
        "broadcast result",
        "use the out-of-place form, e.g. out = out & m: it builds a new tensor of the broadcast shape and leaves the "
        "inputs as they are"),
    "tensor_truth_value": (
        "a tensor is used where Python needs one True or False (`and`, `or`, `not`, `if t:`), which is ambiguous "
        "for a tensor of many values",
        "use the elementwise operators &, |, ~ on tensors, and `if t is not None` to test for None"),
    "embedding_of_floats": (
        "an nn.Embedding is given float values (e.g. x itself); it looks up rows by integer ids",
        "give the embedding integer indices, e.g. the positions torch.arange(T, device=x.device)"),
    "hard_coded_axes": (
        "the code assumes a number of dimensions (an axis counted from the front, like transpose(1, 2) or dim=2, "
        "or sizes unpacked with B, T, D = x.shape): it works for one and breaks for another",
        "count axes from the end, which works for any number of leading dimensions: k.transpose(-2, -1), "
        "softmax(dim=-1)"),
    "weight_transposed": (
        "a weight matrix is used transposed: x @ layer.weight, where nn.Linear computes x @ layer.weight.T + bias "
        "(with a square weight nothing fails, the numbers are just wrong)",
        "call the layer itself, layer(x), or F.linear(x, layer.weight, layer.bias)"),
}

MESSAGES = {
    # ---- the message itself
    "core.headline": "{check} failed: {problem}",
    "core.label.tried": "tried",
    "core.label.expected": "expected",
    "core.label.got": "got",
    "core.label.mistake": "likely mistake",
    "core.label.hint": "hint",
    "core.label.look": "look at",
    "core.label.fix": "the fix",
    # the fix of a named mistake waits until the learner asks for it (tinylm_checks.failure)
    "core.fix_on_request": "think first: when you want the line that fixes it, run show_fix()",
    "core.no_fix": "no check has failed with a named mistake yet in this kernel, so there is no fix to show",
    "core.html.show_fix": "show the fix",
    "core.html.cells": "rows {row} to {last_row}, columns {col} to {last_col};",
    "core.html.legend": "colour from {low} (white) to {high} (blue), grey for -inf; ✕ marks the cells that differ "
                        "(hover a cell for its value)",
    "core.label.also": "and also",
    # nbgrader's answer stubs in a release (tinylm_grading.preprocessors.ClearSolutions), and what the capstone's
    # check recognises as a file left as its stub
    "core.stub.code": "YOUR CODE HERE",
    "core.stub.text": "YOUR ANSWER HERE",
    "core.passed": "✔ {check} passed: {summary}",
    # ---- calling learner code
    "core.called_with": "called with {tried}",
    "core.forward_called": "forward was called with {tried}",
    "core.called_as": "called as {tried}",
    "core.created": "{made} was created",
    "core.and": "{first} and {last}",
    "core.in_float32": "{what} (in float32)",
    "core.argument": "argument {i}",
    "core.raised": {  # what the check was doing when it raised goes on the tried: line
        "problem": "your code raised {error}",
    },
    "core.raised_running": {
        "problem": "running your code raised {error}: {message}",
    },
    "core.learner_frame": "; in {function}, line {line}: {code}",
    "core.learner_frame_no_code": "; in {function}, line {line}",
    "core.hint.dtype_mismatch": (
        "the check runs your module in float64 (module.double()): create layers in __init__, not in forward, and "
        "new tensors with dtype=x.dtype"),
    "core.hint.shape_mismatch": (
        "two shapes don't line up: rebuild the tried: input in a cell of its own and print the shape after each "
        "line of your code; compare with the shape comments in the notebook"),
    "core.hint.exception": "run your code on the input of the tried: line, in a cell of its own, and read the full "
                           "traceback",
    "core.modified_in_place": {
        "problem": "your code changed its input {name} in place",
    },
    "core.no_gradient": {
        "problem": "the output carries no gradient",
    },
    "core.no_gradient_to": {
        "problem": "no gradient reaches {name}",
        "mistake_hint": "compute the output from {name} with tensor operations (no .detach() or numpy)",
    },
    "module.no_gradient_to": {
        "problem": "no gradient reaches {name}",
        "mistake_hint": "the output must be computed through self.{layer}, without .detach() or numpy",
    },
    "core.dtype_not_followed": {
        "problem": "float32 inputs gave a {dtype} output",
        "expected": "torch.float32, the dtype of the inputs",
    },
    # ---- what the learner passed
    "core.kind.none": "None",
    "core.kind.class": "a class",
    "core.not_a_function": {
        "problem": "expected the function {name}, got {kind}",
        "hint": "pass the function itself: {check}({name})",
    },
    "core.instance_not_class": {
        "problem": "expected the class {name}, got an instance of {kind}",
        "hint": "pass the class, not an object: {check}({name})",
    },
    "core.not_a_module_class": {
        "problem": "expected the class {name} (a subclass of nn.Module), got {kind}",
        "hint": "define `class {name}(nn.Module):` and pass the class itself",
    },
    "core.not_a_module": {
        "problem": "{what} did not return an nn.Module",
    },
    # ---- layers and attributes
    "core.not_linear": {
        "problem": "{cls}.{attr} is a {kind}, not an nn.Linear",
        "hint": "the check copies weights into {attr} as into an nn.Linear, {d_in} features in and {d_out} out{no_bias}: "
                "look at how __init__ builds it",
    },
    "core.no_bias": ", without a bias",
    "core.linear_lazy": {
        "problem": "{cls}.{attr} is a lazy layer ({kind}): it has no weight until its first call, so its input size "
                   "is not known yet",
        "got": "{kind}(out_features={d_out_got}), in_features not known before the first call",
        "hint": "the check sets each layer's weight before it runs forward, so a layer needs its input size when the "
                "module is created: in __init__, the width of what {attr} receives is already known",
    },
    "core.linear_without_bias": {
        "problem": "{cls}.{attr} has no bias",
    },
    "core.linear_with_bias": {
        "problem": "{cls}.{attr} has a bias it should not have",
    },
    "core.linear_size": {
        "problem": "{cls}.{attr} has the wrong size",
        "hint": "the sizes in the exercise's docstring are (in_features, out_features)",
    },
    "core.attribute_near_miss": {
        "problem": "{cls} has no attribute {attr} (it has {near})",
        "mistake_hint": "the check copies weights by name: call the layer self.{attr}",
    },
    "core.attribute_missing": {
        "problem": "{cls} has no attribute {attr}",
        "expected": "self.{attr} = {layer} in __init__",
        "hint": "create self.{attr} in __init__ (after super().__init__())",
    },
    # ---- what came back
    "core.not_a_tensor": {
        "problem": "{what} is not a tensor",
        "expected": "a tensor of shape {shape}",
        "hint": "return a torch tensor",
    },
    "core.got_none": "None (did you forget `return`?)",
    "core.wrong_shape": {
        "problem": "{what} has the wrong shape",
    },
    "core.wrong_dtype": {
        "problem": "{what} has dtype {dtype}",
        "expected": "{want} (the dtype of the inputs)",
    },
    "core.not_finite": {
        "problem": "{what} contains NaN or inf",
        "got": "{value} at index {index}",
        "hint": "look for a division by zero, or a softmax over a row where every score is -inf",
    },
    # ---- comparisons
    "core.not_equal": {
        "problem": "{what}: not equal to the reference",
        "expected": "{row} at {at} ({tolerance})",
        "got": "{row_got}; largest difference {err:.3g}, at {at_err}{note}",
    },
    "core.not_equal_note": "; {note}",
    "core.hint.rebuild": "rebuild the tried: input in a cell of its own and print the shape and a few values after "
                         "each line of your code",
    "core.tolerance": "equal up to rounding: |difference| at most {atol:g} + {rtol:g} x |expected|",
    # ---- grading: a fresh copy of the checks refuses a PyTorch whose comparisons were changed (grading.py)
    "grading.torch_patched": {
        "problem": "PyTorch's comparison operations were changed in this notebook: {operations} give wrong answers",
        "hint": "remove the code that replaces them",
    },
    "grading.operation.allclose": "torch.allclose",
    "grading.operation.equal": "torch.equal",
    "grading.operation.subtraction": "tensor subtraction and abs",
    "grading.operation.comparison": "tensor comparison",
    "grading.operation.isfinite": "torch.isfinite",
    # ---- naming a place in a tensor: "query 2 of head 1 in batch 0"
    "core.where.whole": "the whole tensor",
    "core.where.index": "index {index}",
    "core.where.axis": "{axis} {i}",
    "core.where.of": "{inner} of {outer}",
    "core.where.in": "{inner} in {batch}",
    "axis.batch": "batch",
    "axis.head": "head",
    "axis.query": "query",
    "axis.key": "key",
    "axis.feature": "feature",
    "axis.position": "position",
    "axis.row": "row",
    "axis.entry": "entry",
    "axis.vocabulary_entry": "vocabulary entry",
}

PLACES = {
    # mistake id -> where to look for it in the learner's code: shown with the mistake, before its fix
    "view_after_transpose":
        "the .view() the error points to, and what was done to that tensor just before it",
    "not_implemented":
        "the exercise's code cell, as it was when you last ran it",
    "missing_projection":
        "your __init__, and the end of your forward: where the merged heads go",
    "input_modified_in_place":
        "every line that writes into one of the tensors your function was given",
    "no_gradient":
        "each step from the inputs to your return value: where does the result leave autograd?",
    "dtype_changed":
        "the tensors your code creates or converts: which dtype does each one get?",
    "missing_return":
        "the last line of your function, in every branch",
    "numpy_output":
        "the step where your result turns into a numpy array",
    "attribute_name":
        "the self.<name> = ... lines of your __init__, letter by letter against the exercise's text",
    "linear_without_bias":
        "the nn.Linear the message names, in your __init__: every argument you pass it",
    "linear_with_bias":
        "the nn.Linear the message names, in your __init__: what the exercise says about its bias",
    "missing_super_init":
        "the first lines of your __init__, before the first layer is created",
    "batched_T":
        "every .T in your code: how many dimensions the tensor has there",
    "bool_index_mask":
        "the line that masks the scores: the mask's shape against the scores' shape",
    "in_place_broadcast":
        "the line the error points to: the tensor written into, and its shape against the result's",
    "tensor_truth_value":
        "the line the error points to: each and, or, not or if that receives a tensor",
    "embedding_of_floats":
        "the call of your nn.Embedding: what you pass it, and that tensor's dtype",
    "hard_coded_axes":
        "every axis number and x.shape unpacking in your code: do they hold for one more dimension?",
    "weight_transposed":
        "every line that multiplies by a layer's .weight directly",
}
