// The blocking hooks of core/blocking.h for Python: Ctrl-C reaches a long wait, and a
// thread blocked on a storage lock lets other Python threads run meanwhile.
#include "core/blocking.h"
#include "bindings.h"

namespace ember::python {

namespace {

unsigned long main_thread_ident = 0;

bool interpreter_usable() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// Python runs signal handlers on its main thread only, so only that thread looks; the
// handler's exception (KeyboardInterrupt) then unwinds the wait into Python.
void check_python_signals() {
  if (PyThread_get_thread_ident() != main_thread_ident || !interpreter_usable()) return;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

void run_without_gil(void (*fn)(void*), void* arg) {
  if (!interpreter_usable() || !PyGILState_Check()) return fn(arg);
  py::gil_scoped_release release;
  fn(arg);
}

}  // namespace

void install_blocking_hooks() {
  main_thread_ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  set_blocking_hooks(BlockingHooks{&check_python_signals, &run_without_gil});
}

}  // namespace ember::python
