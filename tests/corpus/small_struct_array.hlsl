// An array of small structs in a constant buffer: std140 strides it by 16 (a struct is rounded
// up to 16 bytes), Metal by the struct's own 4. Metal's struct gets padding words after its last
// member (docs/compiler.md "Structs Metal makes smaller"), so the stride is 16 on every target
// (it was OS2001, refused as not portable).
struct Light
{
    float Intensity;
};

cbuffer Lights
{
    Light All[4];
};

RWStructuredBuffer<float> Out;

[shader("compute")]
[numthreads(1, 1, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    Out[id.x] = All[id.x % 4].Intensity;
}
