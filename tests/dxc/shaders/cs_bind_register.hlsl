// -fvk-bind-register maps each register to an explicit set and binding; every resource here has
// a register and every register is given on the command line, as DXC requires.
cbuffer Params : register(b0)
{
    uint width;
    uint3 pad;
};

StructuredBuffer<float4> inputs : register(t0);
StructuredBuffer<float4> weights : register(t0, space1);
RWStructuredBuffer<float4> outputs : register(u0);

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < width)
    {
        outputs[id.x] = inputs[id.x] * weights[id.x];
    }
}
