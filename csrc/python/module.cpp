// The ember._core extension module: registers every binding file in dependency order.
#include "bindings.h"

#ifndef EMBER_VERSION
#define EMBER_VERSION "0.0.0+unknown"
#endif

PYBIND11_MODULE(_core, m) {
  namespace ep = ember::python;
  m.doc() = "ember's C++ core: devices, dtypes, tensors and their ops";
  m.attr("__version__") = EMBER_VERSION;
  ember::cpu_device();  // the CPU is Device id 0, whichever device a script opens first
  ep::bind_errors(m);   // first binding: every later one may raise
  ep::install_blocking_hooks();
  ep::bind_dtype(m);
  ep::bind_device(m);
  auto tensor = ep::bind_tensor(m);
  ep::bind_index(tensor);
  ep::bind_ops(m, tensor);
  ep::bind_ops_more(m, tensor);
  ep::bind_ops_misc(m, tensor);
  ep::bind_numpy(m, tensor);
  ep::bind_dlpack(m, tensor);
  ep::bind_files(m);
  ep::bind_autograd(m, tensor);
  ep::bind_tracking(m, tensor);
  ep::refuse_bare_new(m, "Tensor", "use ember.tensor(data), ember.zeros(shape), ...");
  ep::refuse_bare_new(m, "Device", "use ember.device(\"cpu\"), Device.cpu(), Device.metal(), ...");
  ep::refuse_bare_new(m, "DType", "use the module's dtypes, e.g. ember.float32");
  ep::refuse_bare_new(m, "Event", "use device.record_event()");
  ep::refuse_bare_new(m, "_SafetensorsFile", "use ember.safe_open(path)");
  ep::refuse_bare_new(m, "_GradFn", "use tensor.grad_fn");
  ep::translate_call_errors(m);  // it wraps what the lines above defined
  // Users meet these as ember.Tensor etc.; pickling finds ember.float32 there too.
  for (const char* name : {"Tensor", "Device", "DType"}) m.attr(name).attr("__module__") = "ember";
  ep::install_number_slots(tensor);  // after the setattrs above, which reset number slots
}
