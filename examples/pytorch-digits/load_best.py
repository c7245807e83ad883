"""Load a downloaded checkpoint of this example and evaluate it on the validation images.

    det experiment list-checkpoints --best 1 EXPERIMENT_ID   # the best checkpoint's UUID
    det checkpoint download UUID                            # into checkpoints/UUID
    python3 load_best.py checkpoints/UUID

Needs only torch and scikit-learn (not determined): a checkpoint is a plain directory.
"""

import json
import os
import sys

import torch

from model import build_model, evaluate, load_data


def main(ckpt_dir):
    with open(os.path.join(ckpt_dir, "state.json")) as f:
        state = json.load(f)
    model = build_model(state["hparams"])  # the architecture is chosen by hyperparameters
    model.load_state_dict(torch.load(os.path.join(ckpt_dir, "model.pt"), map_location="cpu"))
    _, (x_val, y_val) = load_data()
    loss, accuracy = evaluate(model, x_val, y_val)
    print(f"checkpoint {ckpt_dir}: trial {state['trial_id']}, step {state['steps_completed']}, "
          f"hparams {state['hparams']}")
    print(f"validation_loss {loss:.4f}  accuracy {accuracy:.4f} on {len(y_val)} images")
    # And what it predicts for the first few validation images:
    with torch.no_grad():
        predicted = model(x_val[:10]).argmax(dim=1).tolist()
    print(f"predicted {predicted}\nactual    {y_val[:10].tolist()}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} CHECKPOINT_DIR")
    main(sys.argv[1])
