# REQUIRES: mpi
# RUN: %python %s %zeroc_build/bin
"""Tests of the launcher (python3 -m zeroc train) and zeroc.data (stdlib only).

The mpirun command is planned for given cores, user and MPI (no process
started); the cache key follows the model and options; errors are clear.
End to end, examples/mlp.mlir compiles into a cache directory and trains on
2 ranks, a second run uses the cached executable, and a missing model file
is an error naming it.

Runs under lit or directly: ``python3 test/python/launcher_unit.py [BIN_DIR]``.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from zeroc import data, launcher  # noqa: E402

BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
MLP = str(ROOT / "examples" / "mlp.mlir")


def zeroc_cli(*args, env=None):
    environ = dict(os.environ, PYTHONPATH=str(ROOT / "python"), ZEROC=str(BIN / "zeroc"))
    environ.pop("OMP_NUM_THREADS", None)
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "zeroc", *args], capture_output=True,
                          text=True, env=environ, timeout=300)


class Plan(unittest.TestCase):
    def plan(self, ranks, cores, root, **kwargs):
        return launcher.plan_run("/x/exe", ranks, ["--data=d"], mpirun="/usr/bin/mpirun",
                                 cores=cores, is_root=root, open_mpi=True, **kwargs)

    def test_fits(self):
        plan = self.plan(2, 8, False, environ={})
        self.assertEqual(plan.command, ["/usr/bin/mpirun", "-np", "2", "--bind-to", "none",
                                        "-x", "OMP_NUM_THREADS", "/x/exe", "--data=d"])
        self.assertEqual(plan.env, {"OMP_NUM_THREADS": "4"})

    def test_user_threads_kept(self):
        plan = self.plan(2, 8, False, environ={"OMP_NUM_THREADS": "3"})
        self.assertEqual(plan.env, {})

    def test_root_and_oversubscribed(self):
        plan = self.plan(4, 2, True, environ={"OMP_NUM_THREADS": "3"},
                         extra_mpirun_args=["--hostfile", "h"])
        self.assertEqual(plan.command[:7], ["/usr/bin/mpirun", "-np", "4", "--allow-run-as-root",
                                            "--oversubscribe", "--bind-to", "none"])
        self.assertEqual(plan.command[-4:], ["--hostfile", "h", "/x/exe", "--data=d"])
        self.assertEqual(plan.env, {"OMP_NUM_THREADS": "1"})
        self.assertIn("oversubscribed", plan.notes[0])

    def test_other_mpi(self):
        plan = launcher.plan_run("/x/exe", 2, [], mpirun="/opt/mpiexec", cores=1,
                                 is_root=True, open_mpi=False, environ={})
        self.assertEqual(plan.command, ["/opt/mpiexec", "-np", "2", "/x/exe"])

    def test_no_mpirun(self):
        plan = launcher.plan_run("/x/exe", 1, ["--steps=1"], mpirun=None, cores=4,
                                 is_root=False, environ={})
        self.assertEqual(plan.command, ["/x/exe", "--steps=1"])
        with self.assertRaises(launcher.LaunchError) as caught:
            launcher.plan_run("/x/exe", 2, [], mpirun=None, cores=4, is_root=False)
        self.assertIn("2 ranks need mpirun", str(caught.exception))


class Vocabulary(unittest.TestCase):
    """The compiler's flag names, torchrun's --nproc-per-node, the old names
    as aliases, and the executable's options passed on without --."""

    def split(self, *argv, command="train"):
        return launcher.split_arguments(launcher._parser(command), list(argv))

    def test_unknown_options_go_to_the_executable(self):
        ours, theirs = self.split(
            "m.mlir", "--zero-stage", "2", "--sample", "200", "--prompt", "ROMEO:",
            "--skip-nonfinite", "3", "--top-k=5", "--top-p", "0.9", "--temperature", "-1",
            "--resume", "ck", "--quiet", "--trace", "t.json", "--", "--x", "y")
        self.assertEqual(ours, ["m.mlir", "--zero-stage", "2", "--resume", "ck", "--quiet"])
        self.assertEqual(theirs, ["--sample", "200", "--prompt", "ROMEO:", "--skip-nonfinite",
                                  "3", "--top-k=5", "--top-p", "0.9", "--temperature", "-1",
                                  "--trace", "t.json", "--x", "y"])
        # An unknown option followed by another option has no value.
        self.assertEqual(self.split("m.mlir", "--flag", "--world-size=2"),
                         (["m.mlir", "--world-size=2"], ["--flag"]))

    def test_names_and_aliases(self):
        parser = launcher._parser("train")
        for argv in (["--zero-stage", "3", "--world-size", "4"], ["--stage=3", "--ranks=4"],
                     ["--zero-stage=3", "--nproc-per-node", "4"]):
            args = parser.parse_args(["m.mlir", *argv])
            self.assertEqual((args.stage, args.ranks), (3, 4), argv)
        notes = launcher._deprecations(["--stage", "1", "--ranks=2", "--stage=1"], "p")
        self.assertEqual(notes, [
            "p: note: --stage is deprecated and will be removed in the next release; "
            "use --zero-stage",
            "p: note: --ranks is deprecated and will be removed in the next release; "
            "use --world-size"])
        self.assertEqual(launcher._deprecations(["--zero-stage", "1", "--world-size=2"], "p"),
                         [])

    def test_banner_filter(self):
        import io
        rule = b"-" * 74 + b"\n"
        stream = io.BytesIO(
            b"rank 0: error: boom\n" + rule +
            b"Primary job  terminated normally, but 1 process returned\n"
            b"a non-zero exit code. Per user-direction, the job has been aborted.\n" + rule +
            rule + b"mpirun detected that one or more processes exited with non-zero "
            b"status, thus causing\nthe job to be terminated.\n" + rule +
            rule + b"There are not enough slots available in the system\n" + rule +
            b"last line\n")
        out = io.BytesIO()
        launcher.filter_mpi_banners(stream, out)
        self.assertEqual(out.getvalue(), b"rank 0: error: boom\n" + rule +
                         b"There are not enough slots available in the system\n" + rule +
                         b"last line\n")
        # A rule without its closing one (not a banner) is copied at the end.
        out = io.BytesIO()
        launcher.filter_mpi_banners(io.BytesIO(rule + b"a\n"), out)
        self.assertEqual(out.getvalue(), rule + b"a\n")


class Cache(unittest.TestCase):
    def test_key(self):
        with tempfile.TemporaryDirectory() as tmp:
            model, fake = os.path.join(tmp, "m.mlir"), os.path.join(tmp, "zeroc")
            Path(model).write_text("module {}\n")
            Path(fake).write_text("#!/bin/sh\n")
            options = launcher.CompileOptions(stage=2, ranks=2)
            key = launcher.cache_key(model, options, fake)
            self.assertEqual(key, launcher.cache_key(model, launcher.CompileOptions(2, 2), fake))
            for other in (launcher.CompileOptions(3, 2), launcher.CompileOptions(2, 4),
                          launcher.CompileOptions(2, 2, precision="bf16"),
                          launcher.CompileOptions(2, 2, bucket_bytes=4096),
                          launcher.CompileOptions(2, 2, remat="full"),
                          launcher.CompileOptions(2, 2, remat="selective"),
                          launcher.CompileOptions(2, 2, grad_accum=2)):
                self.assertNotEqual(key, launcher.cache_key(model, other, fake))
            # --remat=none is zeroc's default: the same executable.
            self.assertEqual(key, launcher.cache_key(model, launcher.CompileOptions(
                2, 2, remat="none"), fake))
            self.assertEqual(launcher.CompileOptions(2, 2, remat="full").zeroc_flags()[-1],
                             "--remat=full")
            self.assertEqual(launcher.CompileOptions(2, 2, grad_accum=4).zeroc_flags()[-1],
                             "--grad-accum=4")
            path = launcher.cached_executable(model, options, fake, "/c")
            self.assertTrue(path.startswith("/c/m-s2-n2-cpu-"), path)
            Path(model).write_text("module { }\n")
            self.assertNotEqual(key, launcher.cache_key(model, options, fake))
            self.assertEqual(launcher.cache_directory("rel"), os.path.abspath("rel"))

    def test_find_zeroc(self):
        with self.assertRaises(launcher.LaunchError) as caught:
            launcher.find_zeroc("/nonexistent/zeroc")
        self.assertIn("--zeroc /nonexistent/zeroc: not an executable file", str(caught.exception))


class Data(unittest.TestCase):
    def test_text_to_bin_and_sampling(self):
        with tempfile.TemporaryDirectory() as tmp:
            text, train, val = (os.path.join(tmp, n) for n in ("t.txt", "t.bin", "v.bin"))
            Path(text).write_bytes(bytes(range(256)) * 4)
            self.assertEqual(data.text_to_bin(text, train, val_output=val, val_fraction=0.25),
                             (768, 256))
            tokens = data.read_tokens(train)
            self.assertEqual(list(tokens[:3]), [0, 1, 2])
            self.assertEqual(Path(train).stat().st_size, 2 * 768)
            self.assertEqual(list(data.read_tokens(val)[:2]), [0, 1])
            self.assertEqual(list(data.read_tokens(text, "text")), list(range(256)) * 4)
            # ((s*G + i)*T) mod (L - T - 1) with L = 768, T = 7, G = 3, step 40.
            starts = data.batch_starts(768, 40, 3, 7)
            self.assertEqual(starts, [(120 * 7) % 760, (121 * 7) % 760, (122 * 7) % 760])
            x, y = data.sample_batch(tokens, 40, 3, 7)
            self.assertEqual(x[0], list(tokens[starts[0]:starts[0] + 7]))
            self.assertEqual(y[0], list(tokens[starts[0] + 1:starts[0] + 8]))
            with self.assertRaises(ValueError):
                data.write_tokens(train, [70000])


@unittest.skipUnless(shutil.which("mpirun"), "needs mpirun")
class EndToEnd(unittest.TestCase):
    def test_train_cached_and_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            tokens = os.path.join(tmp, "tokens.bin")
            data.write_tokens(tokens, [(i * 7) % 37 for i in range(2000)])  # mlp: vocab 37
            cache, log = os.path.join(tmp, "cache"), os.path.join(tmp, "log.jsonl")
            args = ["train", MLP, "--zero-stage", "2", "--nproc-per-node", "2", "--data", tokens,
                    "--steps", "3", "--cache-dir", cache, "--log-json", log]
            first = zeroc_cli(*args)
            self.assertEqual(first.returncode, 0, first.stderr)
            self.assertIn("zeroc: compiling", first.stderr)
            self.assertIn("--zero-stage=2 --world-size=2", first.stderr)
            self.assertIn("step 2/3", first.stdout)
            losses = [json.loads(l)["loss"] for l in Path(log).read_text().splitlines()
                      if '"loss"' in l]
            self.assertEqual(len(losses), 3)
            executables = [n for n in os.listdir(cache) if n.startswith("mlp-s2-n2-cpu-")
                           and "." not in n]
            self.assertEqual(len(executables), 1)

            second = zeroc_cli(*args, "--quiet")
            self.assertEqual(second.returncode, 0, second.stderr)
            self.assertNotIn("compiling", second.stderr)
            self.assertNotIn("step", second.stdout)
            again = [json.loads(l)["loss"] for l in Path(log).read_text().splitlines()
                     if '"loss"' in l]
            self.assertEqual(again, losses)

            printed = zeroc_cli("compile", MLP, "--stage", "2", "--ranks", "2",
                                "--cache-dir", cache)
            self.assertEqual(printed.stdout.strip(), os.path.join(cache, executables[0]))

            dry = zeroc_cli("train", MLP, "--ranks", "64", "--data", tokens,
                            "--cache-dir", cache, "--dry-run", "--", "--seed=3")
            self.assertEqual(dry.returncode, 0, dry.stderr)
            self.assertIn("# would compile: ", dry.stdout)
            self.assertIn("OMP_NUM_THREADS=1 ", dry.stdout)
            self.assertIn(" -np 64 ", dry.stdout)
            self.assertIn("--oversubscribe", dry.stdout)
            self.assertIn(f"--data={tokens} --seed=3", dry.stdout)
            self.assertEqual(os.geteuid() == 0, "--allow-run-as-root" in dry.stdout)
            dry = zeroc_cli("train", MLP, "--remat", "selective", "--data", tokens,
                            "--cache-dir", cache, "--dry-run")
            self.assertEqual(dry.returncode, 0, dry.stderr)
            self.assertIn("--remat=selective -o ", dry.stdout)
            bad = zeroc_cli("train", MLP, "--remat", "some", "--data", tokens, "--dry-run")
            self.assertNotEqual(bad.returncode, 0)
            self.assertIn("--remat: invalid choice: 'some'", bad.stderr)

            missing = zeroc_cli("train", os.path.join(tmp, "nope.mlir"), "--data", tokens)
            self.assertEqual(missing.returncode, 1)
            self.assertIn(f"python3 -m zeroc train: error: model file "
                          f"{os.path.join(tmp, 'nope.mlir')}: no such file", missing.stderr)
            no_data = zeroc_cli("train", MLP)
            self.assertEqual(no_data.returncode, 2)
            self.assertIn("--data PATH is required", no_data.stderr)
            bad_data = zeroc_cli("train", MLP, "--data", os.path.join(tmp, "none.bin"))
            self.assertEqual(bad_data.returncode, 1)
            self.assertIn("--data " + os.path.join(tmp, "none.bin") + ": no such file",
                          bad_data.stderr)
            no_compiler = zeroc_cli("train", MLP, "--data", tokens, "--cache-dir", cache,
                                    env={"ZEROC": os.path.join(tmp, "zeroc")})
            self.assertEqual(no_compiler.returncode, 1)
            self.assertIn("$ZEROC", no_compiler.stderr)
            every = zeroc_cli("train", MLP, "--data", tokens, "--save-every", "5")
            self.assertEqual(every.returncode, 2)
            self.assertIn("--save-every needs --save DIR", every.stderr)
            # A checkpoint of 2 ranks at stage 2 resumes on 1 rank, stage 0
            # (through the cache), and its directory is a valid --init.
            ck = os.path.join(tmp, "ck")
            saved = zeroc_cli(*args, "--save", ck, "--save-every", "2", "--keep-last", "1")
            self.assertEqual(saved.returncode, 0, saved.stderr)
            self.assertEqual(sorted(os.listdir(ck)), ["latest", "step-0000003"])
            resumed = zeroc_cli("train", MLP, "--data", tokens, "--steps", "4", "--resume", ck,
                                "--cache-dir", cache)
            self.assertEqual(resumed.returncode, 0, resumed.stderr)
            self.assertIn("steps 3..4 (resumed from " + os.path.join(ck, "step-0000003"),
                          resumed.stdout)
            init = zeroc_cli("train", MLP, "--data", tokens, "--steps", "1", "--init", ck,
                             "--cache-dir", cache, "--dry-run")
            self.assertEqual(init.returncode, 0, init.stderr)
            self.assertIn(f"--init={ck}", init.stdout)
            # The executable's own failure is the launcher's exit status.
            wrong = zeroc_cli("train", MLP, "--data", tokens, "--cache-dir", cache,
                              "--steps", "1", "--", "--bogus")
            self.assertEqual(wrong.returncode, 1)
            self.assertIn("unknown option '--bogus'", wrong.stderr)
            # Without --, with --quiet: the executable's error, and not
            # mpirun's abort banner.
            for quiet in ([], ["--quiet"]):
                wrong = zeroc_cli("train", MLP, "--zero-stage", "2", "--world-size", "2",
                                  "--data", tokens, "--cache-dir", cache, "--steps", "1",
                                  "--bogus", "7", *quiet)
                self.assertEqual(wrong.returncode, 1, wrong.stderr)
                self.assertIn("unknown option '--bogus'", wrong.stderr)
                self.assertNotIn("Primary job", wrong.stderr)
                self.assertNotIn("-" * 74, wrong.stderr)
                self.assertNotIn("deprecated", wrong.stderr)

            # Sampling from a checkpoint, without data: the launcher's
            # sample command, and train's --resume with --sample.
            sampled = zeroc_cli("sample", MLP, ck, "--sample", "5", "--cache-dir", cache)
            self.assertEqual(sampled.returncode, 0, sampled.stderr)
            self.assertIn(f"--init={ck} --sample=5", sampled.stderr)
            resumed = zeroc_cli("train", MLP, "--resume", ck, "--sample", "5",
                                "--cache-dir", cache)
            self.assertEqual(resumed.returncode, 0, resumed.stderr)
            self.assertEqual(resumed.stdout, sampled.stdout)
            both = zeroc_cli("train", MLP, "--resume", ck, "--sample", "5", "--data", tokens)
            self.assertEqual(both.returncode, 2)
            self.assertIn("--sample takes no --data", both.stderr)
            nock = zeroc_cli("sample", MLP, os.path.join(tmp, "none"))
            self.assertEqual(nock.returncode, 1)
            self.assertIn("none: no such file or directory", nock.stderr)

            # One rank count under two names with two values is an error.
            two = zeroc_cli("train", MLP, "--world-size", "2", "--nproc-per-node", "3",
                            "--data", tokens, "--dry-run")
            self.assertEqual(two.returncode, 2)
            self.assertIn("--world-size 2 and --nproc-per-node 3 give two values of the "
                          "world size", two.stderr)
            # The old names still work, with a note.
            old = zeroc_cli("train", MLP, "--stage", "1", "--ranks", "2", "--data", tokens,
                            "--cache-dir", cache, "--dry-run")
            self.assertEqual(old.returncode, 0, old.stderr)
            self.assertIn("--zero-stage=1 --world-size=2", old.stdout)
            self.assertIn("note: --stage is deprecated", old.stderr)
            self.assertIn("note: --ranks is deprecated", old.stderr)

            # After a Ctrl-C: a complete checkpoint newer than the run's
            # start means the work is saved (status 0, with a note); an
            # older one, or none, leaves mpirun's status.
            self.assertEqual(launcher.saved_step(ck), 3)
            status, note = launcher.after_interrupt(1, ck, None)
            self.assertEqual(status, 0)
            self.assertIn("mpirun exited with status 1, but the checkpoint of step 3", note)
            self.assertEqual(launcher.after_interrupt(1, ck, 3), (1, None))
            self.assertEqual(launcher.after_interrupt(1, os.path.join(tmp, "none"), None),
                             (1, None))
            self.assertEqual(launcher.after_interrupt(1, None, None), (1, None))
            # A real interrupt of the launcher's process group mid-run: the
            # launcher waits for the ranks, which save and stop.
            # On a SIGINT, Open MPI 4's mpirun sends the ranks SIGCONT, waits
            # odls_base_sigkill_timeout seconds (default 1), sends SIGTERM,
            # waits as long again and sends SIGKILL; it exits only after the
            # second wait, so this part takes twice the timeout. 10 s for the
            # ranks to finish the step and save (the default's 1 s was too
            # short on a loaded machine; 30 s cost a minute per run).
            environ = dict(os.environ, PYTHONPATH=str(ROOT / "python"), ZEROC=str(BIN / "zeroc"),
                           OMPI_MCA_odls_base_sigkill_timeout="10")
            stopped = os.path.join(tmp, "stopped")
            with open(os.path.join(tmp, "stopped.err"), "w+") as errors:
                process = subprocess.Popen(
                    [sys.executable, "-m", "zeroc", "train", MLP, "--world-size", "2",
                     "--zero-stage", "2", "--data", tokens, "--steps", "1000000", "--save",
                     stopped, "--cache-dir", cache], stdout=subprocess.PIPE,
                    stderr=errors, text=True, env=environ, start_new_session=True,
                    # As at a terminal (lit may start tests with SIGINT ignored).
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
                out = ""
                while "step 0/1000000" not in out:
                    line = process.stdout.readline()
                    if not line:
                        break
                    out += line
                os.killpg(process.pid, signal.SIGINT)
                out += process.stdout.read()
                process.wait(timeout=120)
                errors.seek(0)
                err = errors.read()
            self.assertEqual(process.returncode, 0, out + err)
            self.assertIn("zeroc: stopped by", out)
            self.assertLess(launcher.saved_step(stopped), 1000000)

            # A run that fails before training leaves no --save folder.
            fresh = os.path.join(tmp, "fresh", "ck")
            early = zeroc_cli("train", MLP, "--data", tokens, "--cache-dir", cache,
                              "--save", fresh, "--", "--init", os.path.join(tmp, "no.st"))
            self.assertEqual(early.returncode, 1, early.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "fresh")), early.stderr)

    def test_import_does_not_load_torch(self):
        code = ("import sys; import zeroc, zeroc.ir, zeroc.data, zeroc.weights, "
                "zeroc.launcher, zeroc.__main__, zeroc.models.gpt2\n"
                "assert 'torch' not in sys.modules, 'zeroc imported torch'\n")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
        self.assertEqual(result.returncode, 0, result.stderr)
        usage = zeroc_cli("--help")
        self.assertEqual(usage.returncode, 0)
        self.assertIn("train MODEL.mlir", usage.stdout)
        # The importer's --help and argument errors need no PyTorch (a
        # torch package that cannot be imported stands for a missing one).
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "torch"))
            Path(tmp, "torch", "__init__.py").write_text("raise ImportError('no torch')\n")
            env = {"PYTHONPATH": f"{tmp}{os.pathsep}{ROOT / 'python'}"}
            helped = zeroc_cli("import", "--help", env=env)
            self.assertEqual(helped.returncode, 0, helped.stderr)
            self.assertIn("usage: python3 -m zeroc import", helped.stdout)
            needs = zeroc_cli("import", "m.py:M", "-o", "x.mlir", "--batch-size", "1",
                              "--block-size", "2", env=env)
            self.assertEqual(needs.returncode, 1)
            self.assertIn("the importer needs PyTorch", needs.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
